package kind_test

import (
	"fmt"
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// `helm upgrade --set ps.number=3` a tenth into the run, then `--set ps.number=2` once worker 0
// has re-cut the parameters over 3 ps: no pod of the run is replaced (the pods' checksum leaves
// the ps count out), worker 0 re-cuts the parameters over 3 ps and then 2 once the kubelet has
// updated their mounted configuration, ps 0's global step never goes back, and the run completes
// at exactly its last step with the test accuracy (within maxAccuracyCost) of the same values
// trained side by side without the change. Growing moves every ps's optimizer state with its
// parameters; the ps scaled away is gone before worker 0 reads the new count, so its slice comes
// from worker 0's copy and its optimizer state starts again, as the re-cut event says. Every pod
// records the run's history, which holds no violated invariant at the end. Not parallel, as
// TestNodeLost: its two releases beside the parallel scenarios would add to a cluster already
// short of CPU, where pods wait minutes to be scheduled.
func TestHelmUpgradeRecutsThePs(t *testing.T) {
	reference := newRelease(t, "pstrain-recut-kept", recutRunSteps)
	reference.install(joinedRun(recutRunSteps)...)
	r := newRelease(t, "pstrain-recut", recutRunSteps)
	r.install(append(joinedRun(recutRunSteps), recordHistory...)...)
	before := r.waitReady(allPods...)
	steps := r.watchStep("mnist-ps-0")
	defer steps.stop()
	r.waitStep("mnist-ps-0", recutRunSteps/10)

	r.upgradePs(3)
	after := r.waitReady(append(allPods, "mnist-ps-2")...)
	for _, p := range allPods {
		if after[p].UID != before[p].UID {
			t.Errorf("helm upgrade --set ps.number=3 replaced %s", p)
		}
	}
	grown := r.waitRecut(3)
	if grown.LostState != 0 {
		t.Errorf("the re-cut to 3 ps lost the optimizer state of %d parameters: %s", grown.LostState, grown.Line)
	}

	r.upgradePs(2)
	r.waitGone("mnist-ps-2")
	shrunk := r.waitRecut(2)
	t.Logf("re-cut at global steps %d (to 3 ps) and %d (to 2 ps; the optimizer state of %d parameters started again)",
		grown.Step, shrunk.Step, shrunk.LostState)
	if shrunk.Step <= grown.Step {
		t.Errorf("the second re-cut, at global step %d, is not after the first at %d", shrunk.Step, grown.Step)
	}
	r.waitCompleted()
	reference.waitCompleted()
	steps.stop()
	if steps.wentBack != "" {
		t.Error(steps.wentBack)
	}
	recut, kept := r.result(), reference.result()
	t.Logf("test accuracy %.4f with the re-cuts, %.4f without", recut.TestAccuracy, kept.TestAccuracy)
	if cost := accuracyCost(recut, kept); cost > maxAccuracyCost {
		t.Errorf("test accuracy %.4f with the re-cuts, %.4f without: the re-cuts cost %.4f, more than %.3f", recut.TestAccuracy, kept.TestAccuracy, cost, maxAccuracyCost)
	}
	assertNotRestarted(t, r)
	r.checkHistory()
}

// recutRunSteps are the global steps of the re-cut runs: they run alone, so a new ps starts
// sooner than a new worker among the parallel scenarios.
const recutRunSteps = 60000

// upgradePs is `helm upgrade --set ps.number=N` of the run's values.
func (r *release) upgradePs(ps int) {
	r.t.Helper()
	values := append(joinedRun(recutRunSteps), recordHistory...)
	res := r.helm("upgrade", append(values, "--set", fmt.Sprintf("ps.number=%d", ps))...)
	if res.Err != nil || !strings.Contains(res.Stdout, "STATUS: deployed") {
		r.t.Fatalf("helm upgrade --set ps.number=%d:\n%s", ps, res)
	}
	r.t.Logf("helm upgrade --set ps.number=%d", ps)
	// The kubelet writes the new ConfigMap into worker 0's volume when it next syncs the pod, up
	// to a minute or two after the upgrade, by when a fast machine's run may have ended. Any
	// change to the pod syncs it at once: the scenario is about the re-cut, not that period.
	res = kind.Kubectl("annotate", "pod", "mnist-worker-0", "--namespace", r.namespace, "--overwrite",
		fmt.Sprintf("pstrain-e2e/ps-number=%d", ps))
	if res.Err != nil {
		r.t.Fatalf("kubectl annotate pod mnist-worker-0:\n%s", res)
	}
}

// waitRecut waits for worker 0's re-cut of the parameters over `ps` ps, and returns its event.
func (r *release) waitRecut(ps int) harness.Event {
	r.t.Helper()
	var recut harness.Event
	err := cluster.Until(trainTimeout, fmt.Sprintf("worker 0 re-cuts the parameters over %d ps", ps), func() (bool, string, error) {
		f, err := r.podFacts("mnist-worker-0")
		if err != nil || len(f.Recuts) == 0 || f.Recuts[len(f.Recuts)-1].ToPs != ps {
			if state, _, said, _ := r.progress("mnist-ps-0"); state == "completed" {
				return false, said, fmt.Errorf("the run completed before the re-cut to %d ps", ps)
			}
			return false, "", nil
		}
		recut = f.Recuts[len(f.Recuts)-1]
		return true, "", nil
	})
	if err != nil {
		r.t.Fatal(err, "\n", r.tails("mnist-worker-0", "mnist-ps-0"))
	}
	return recut
}
