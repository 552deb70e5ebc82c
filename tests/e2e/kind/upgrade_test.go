package kind_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
)

// `helm upgrade` with a value that is not part of the run (checkpoints.everySeconds) a fifth into
// the run: every pod restarts (the ConfigMap's checksum changed), each ps restores its checkpoint
// of the run, and the run completes at its last step.
func TestUpgradeKeepsTheRun(t *testing.T) {
	r := newRelease(t, "pstrain-upgrade", longRun)
	steps := fmt.Sprintf("hyperparams.trainsteps=%d", longRun)
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
		logs := kind.Kubectl("logs", "--namespace", r.namespace, ps)
		restored := regexp.MustCompile(psMarker(ps) + `: restored \S+ at global step [1-9]\d*`).FindString(logs.Stdout)
		if restored == "" || strings.Contains(logs.Stdout, "belongs to another run") {
			t.Errorf("the upgraded %s did not resume the run from its checkpoint:\n%s", ps, logs)
		} else {
			t.Log(restored)
		}
	}
	r.waitCompleted()
	assertNotRestarted(t, r)
}
