package kind_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"pstrain/tests/e2e/harness"
)

// A run long enough to last through helm test and two pod deletions: at values.yml's limits, with
// this test's and the upgrade test's releases training side by side on 2 cores, it took 130 s
// here, pod restarts included, and the new worker 1 has tens of seconds to rejoin and train.
const longRun = 60000

// `helm test mnist` while the cluster trains; `kubectl delete pod mnist-ps-1` a fifth into the
// run: the StatefulSet makes a new mnist-ps-1, which restores its checkpoint; then `kubectl
// delete pod mnist-worker-1`: a new worker 1 joins the run. The run completes at its last step.
func TestHelmTestAndDeletedPods(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-faults", longRun)
	r.install("--set", fmt.Sprintf("hyperparams.trainsteps=%d", longRun))
	before := r.waitReady(allPods...)

	// The test pod waits for progress of every ps and worker 0, and prints it.
	res := kind.Run(repo, "helm", "test", releaseName, "--namespace", r.namespace, "--logs")
	for _, want := range []string{`Phase: +Succeeded`, `mnist-ps-0.mnist-ps:8090 ps 0: training: global step [1-9]`,
		`mnist-ps-1.mnist-ps:8090 ps 1: training: global step [1-9]`,
		`mnist-worker-0.mnist-worker:8090 worker 0: training: global step [1-9]`} {
		if res.Err != nil || !regexp.MustCompile(want).MatchString(res.Stdout) {
			t.Fatalf("helm test while training: no %q in\n%s", want, res)
		}
	}
	t.Logf("helm test mnist --logs:\n%s", res.Stdout)

	deleteAt := r.waitStep("mnist-ps-1", longRun/5)
	after := deletePod(t, r, "mnist-ps-1", before)
	ps1, err := r.podFacts("mnist-ps-1")
	if err != nil || len(ps1.Restored) != 1 {
		t.Fatalf("the new mnist-ps-1 did not restore a checkpoint once (%v): %s", err, harness.Lines(ps1.Restored))
	}
	if step := ps1.Restored[0].Step; step < deleteAt || step >= longRun {
		t.Errorf("the new mnist-ps-1 restored global step %d; it was at %d when deleted", step, deleteAt)
	}
	t.Log(harness.Lines(ps1.Restored))

	r.waitStep("mnist-ps-1", longRun/2)
	deletePod(t, r, "mnist-worker-1", after)
	r.waitCompleted()
	if w1, err := r.podFacts("mnist-worker-1"); err != nil || len(w1.Steps) == 0 {
		t.Errorf("the new mnist-worker-1 recorded no training step (%v)", err)
	}
	assertNotRestarted(t, r)
}

// deletePod is `kubectl delete pod POD`, then waits until the StatefulSet has made a new pod of
// that name (another UID) and every pod of the release is ready; it returns the pods then.
func deletePod(t *testing.T, r *release, pod string, before map[string]corev1.Pod) map[string]corev1.Pod {
	t.Helper()
	res := kind.Kubectl("delete", "pod", "--namespace", r.namespace, pod)
	if res.Err != nil || !strings.Contains(res.Stdout, fmt.Sprintf(`pod "%s" deleted`, pod)) {
		t.Fatalf("kubectl delete pod %s:\n%s", pod, res)
	}
	after := r.waitReady(allPods...)
	if after[pod].UID == before[pod].UID {
		t.Fatalf("%s is still the pod that was deleted (UID %s)", pod, before[pod].UID)
	}
	for _, p := range allPods {
		if p != pod && after[p].UID != before[p].UID {
			t.Errorf("%s was replaced too", p)
		}
	}
	t.Logf("kubectl delete pod %s: a new %s (UID %s) is ready", pod, pod, after[pod].UID)
	return after
}
