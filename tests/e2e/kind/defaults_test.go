package kind_test

import (
	"fmt"
	"strings"
	"testing"
)

// The chart's own defaults, without values.yml, in a namespace that enforces Pod Security
// `restricted`: helm install warns of nothing, and every pod starts (no hostPath, no root init
// container) and the run trains to exactly its last global step. Not parallel: go test runs it
// first, alone (its file comes first), as the chart's worker requests a whole CPU, which no node
// had free for 8 minutes beside the parallel scenarios' pods of 200m.
func TestRestrictedNamespaceChartDefaults(t *testing.T) {
	r := newChartDefaultsRelease(t, "pstrain-restricted", 300)
	r.enforcePodSecurity("restricted")
	if res := r.install(); strings.Contains(res.Stderr, "PodSecurity") {
		t.Errorf("helm install of the chart's defaults in a restricted namespace warned of Pod Security:\n%s", res)
	}
	r.waitReady(r.podNames()...)
	r.waitCompleted()
	if tail := r.execShowing("mnist-ps-0", fmt.Sprintf("PS 0: global step %d done", r.trainSteps), "tail", podLog); tail.Err != nil ||
		!strings.Contains(tail.Stdout, fmt.Sprintf("PS 0: global step %d done", r.trainSteps)) {
		t.Errorf("kubectl exec mnist-ps-0 -- tail %s:\n%s", podLog, tail)
	}
	assertNotRestarted(t, r)
}

// The run of TestDefaultRenderingReappliedMidRun: the chart's one sync worker at 100m of CPU,
// where it has a whole CPU by default, trains about 100 global steps/s (about 1.4 ms of CPU a
// step, ps and worker together), so 40,000 steps last longer than 100,000 did at the default's
// CPU, which a second rendering, apply and status exec on busy nodes did not always outlast (see
// there), for two fifths of the CPU work. Beside a C++ build, 20,000 ended before the check.
const (
	reappliedRun       = 40000
	reappliedRunLimits = "ps.limit.cpu=100m,worker.limit.cpu=100m"
)

// The chart's defaults as a GitOps tool applies them (helm template --no-hooks, kubectl apply),
// with no auth.existingSecret: the key is the token Kubernetes writes into the chart's Secret.
// Rendered again mid-run the manifests are the same byte for byte, and applied they change
// nothing: no pod replaced or restarted, the run id kept, and the run ends at exactly its last step.
func TestDefaultRenderingReappliedMidRun(t *testing.T) {
	t.Parallel()
	r := newChartDefaultsRelease(t, "pstrain-reapply", reappliedRun)
	render := func() string {
		res := r.helm("template", "--no-hooks", "--set", reappliedRunLimits)
		if res.Err != nil {
			t.Fatalf("helm template:\n%s", res)
		}
		return res.Stdout
	}
	rendered := render()
	file := r.manifests(t, "defaults.yaml", rendered)
	r.apply(t, file)
	before := r.waitReady(r.podNames()...)
	uid := r.runID(t)
	// Early in the run: on busy nodes the status exec and the rendering below take long enough
	// for the rest of a run to end (a run applied again at step 71,412 of 100,000 had completed
	// by the check below).
	at := r.waitStep("mnist-ps-0", reappliedRun/50)

	if again := render(); again != rendered {
		t.Errorf("a second rendering of the default values differs from the first:\n%s", diffLines(rendered, again))
	}
	out := r.apply(t, file)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		// kubectl sends a PodDisruptionBudget's selector whole on every apply (see TestGitOps…).
		pdb := strings.HasPrefix(line, "poddisruptionbudget.policy/") && strings.HasSuffix(line, " configured")
		if !pdb && !strings.HasSuffix(line, " unchanged") {
			t.Errorf("kubectl apply of the same manifests changed something: %q", line)
		}
	}
	after := r.waitReady(r.podNames()...)
	for _, p := range r.podNames() {
		if after[p].UID != before[p].UID {
			t.Errorf("%s was replaced by the second kubectl apply", p)
		}
	}
	// The same pods (above), so the same run id in their logs, if the ConfigMap kept its UID.
	if again := r.configMapUID(t); again != uid {
		t.Errorf("the second kubectl apply changed the run id from %s to %s", uid, again)
	}
	// Mid-run, or the re-apply proved nothing about a running job.
	if state, _, said, err := r.progress("mnist-ps-0"); err != nil || state != "training" {
		t.Errorf("ps 0 no longer trains after the second kubectl apply (%v):\n%s", err, said)
	}
	t.Logf("kubectl apply again at ps 0's global step %d: nothing changed, run id %s", at, uid)
	r.waitCompleted()
	assertNotRestarted(t, r)
}
