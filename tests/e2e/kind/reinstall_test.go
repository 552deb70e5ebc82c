package kind_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// `helm install` with values.yml, the run completes; `helm uninstall` leaves worker 0's
// completion record and the ps checkpoints on the nodes; `helm install` again with the same
// values is a new run (a new ConfigMap, so a new run id): the new pods train it to its last step,
// restoring none of the old run's checkpoints and not taking its completion record for theirs.
func TestReinstallTrainsANewRun(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-reinstall", 200) // values.yml's hyperparams.trainsteps
	r.install()
	r.waitReady(allPods...)
	first := r.waitResult("")
	r.uninstall()
	for _, file := range []string{"mnist-worker-0/completed.json", "mnist-ps-0/checkpoint.bin", "mnist-ps-1/checkpoint.bin"} {
		if _, err := os.Stat(filepath.Join(r.logDir(), file)); err != nil {
			t.Errorf("after helm uninstall: %v", err)
		}
	}

	r.install()
	r.waitReady(allPods...)
	second := r.waitResult(first.RunID)
	t.Logf("run %s, then run %s, each trained to global step %d", first.RunID, second.RunID, second.GlobalStep)
	r.waitCompleted()
	for _, ps := range psPods {
		if f, err := r.podFacts(ps); err != nil || len(f.Restored) > 0 {
			t.Errorf("%s restored the first run's checkpoint (%v):\n%s", ps, err, harness.Lines(f.Restored))
		}
	}
	err := cluster.Until(trainTimeout, "the end of both runs in ps 0's events on the host", func() (bool, string, error) {
		f, err := r.nodeFacts("mnist-ps-0")
		return f.RunsEnded == 2, fmt.Sprintf("%d runs ended", f.RunsEnded), err
	})
	if err != nil {
		t.Error(err)
	}
	assertNotRestarted(t, r)
}
