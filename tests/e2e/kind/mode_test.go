package kind_test

import (
	"testing"
)

// The chart's defaults with 4 workers (`--set worker.number=4`, nothing else of the mode set):
// every pod's started event says the sync mode that `sync: auto` chooses where each worker has
// CPUs of its own, and the run ends at exactly its last global step.
func TestDefaultsTrainFourWorkersInSync(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-mode", 400)
	r.install("--set", "hyperparams.trainsteps=400", "--set", "worker.number=4")
	pods := append(append([]string{}, psPods...), "mnist-worker-0", "mnist-worker-1", "mnist-worker-2", "mnist-worker-3")
	r.waitReady(pods...)
	r.waitCompleted()
	for _, pod := range pods {
		f, err := r.podFacts(pod)
		if err != nil || f.Starts != 1 || f.Mode != "sync" {
			t.Errorf("%s: %d starts, mode %q, want one start in sync mode (%v)", pod, f.Starts, f.Mode, err)
		}
	}
	assertNotRestarted(t, r)
}
