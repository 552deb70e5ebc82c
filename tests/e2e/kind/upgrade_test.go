package kind_test

import (
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// `helm upgrade` with a value that is not part of the run (checkpoints.everySeconds) a fifth into
// the run: every pod restarts (the ConfigMap's checksum changed), each ps restores its checkpoint
// of the run, and the run completes at its last step.
func TestUpgradeKeepsTheRun(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-upgrade", longRun)
	steps := longRunValues()
	r.install("--set", steps)
	before := r.waitReady(allPods...)
	r.waitStep("mnist-ps-0", longRun/5)

	res := r.helm("upgrade", "--set", steps, "--set", "checkpoints.everySeconds=5")
	if res.Err != nil || !strings.Contains(res.Stdout, `Release "mnist" has been upgraded`) ||
		!strings.Contains(res.Stdout, "REVISION: 2") {
		t.Fatalf("helm upgrade:\n%s", res)
	}
	err := cluster.Until(startTimeout, "every pod replaced and ready", func() (bool, string, error) {
		pods, err := r.pods()
		if err != nil {
			return false, "", err
		}
		for _, p := range allPods {
			if pod, ok := pods[p]; !ok || pod.UID == before[p].UID || !cluster.Ready(pod) {
				return false, describeAll(pods), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("helm upgrade: every pod replaced")

	for _, ps := range psPods {
		// A ps that found a checkpoint of another run would start over, restoring nothing.
		f, err := r.podFacts(ps)
		if err != nil || len(f.Restored) != 1 || f.Restored[0].Step <= 0 {
			t.Errorf("the upgraded %s did not resume the run from its checkpoint (%v):\n%s", ps, err, harness.Lines(f.Restored))
		} else {
			t.Log(harness.Lines(f.Restored))
		}
	}
	r.waitCompleted()
	assertNotRestarted(t, r)
}
