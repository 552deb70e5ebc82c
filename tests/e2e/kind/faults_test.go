package kind_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// A run long enough to last through helm test and two pod deletions: at values.yml's limits, with
// this test's and the upgrade test's releases training side by side on 2 cores, 60,000 steps took
// 130 s here, pod restarts included. With 18 scenarios in parallel, at about 660 global steps/s, a
// run of 60,000 ended during helm test's pod start and during helm upgrade's pod replacements,
// and 100,000 lasted. Half of those steps at half of values.yml's CPU last as long for half the
// CPU work (longRunValues).
const longRun = 50000

// longRunValues are the values of such a run: longRun global steps, asynchronous, every pod at
// 100m of CPU. These scenarios are about faults and upgrades, not the mode; asynchronous workers
// on kind's shared cores make global steps about twice as fast as sync ones, so the run lasts as
// long as measured.
func longRunValues() string {
	return asyncRunValues(longRun) + ",ps.limit.cpu=100m,worker.limit.cpu=100m"
}

// deletedPodsRun are the steps of TestHelmTestAndDeletedPods: helm test's pod start, two pods
// replaced and the new worker's first step. Beside a C++ build, helm test passed at 47% of a
// run of longRun at 100m a pod (about 430 s), and the run completed before the new worker 1 made
// a step. It trains as the joined runs do (joinedRun: the ps at values.yml's 200m): 548-648 s on
// 2 cores, 599 beside a C++ build, where every pod at 100m took 768 s there and ended the kind
// phase alone for its last 270 s.
const deletedPodsRun = 2 * longRun

// asyncRunValues are the values of an asynchronous run of steps global steps, with a progress
// line every 100 steps: at the chart's one a step, each pod's events.jsonl, which the scenarios'
// waits read whole through kubectl exec every second, grows by megabytes a minute.
func asyncRunValues(steps int) string {
	return fmt.Sprintf("hyperparams.trainsteps=%d,hyperparams.sync=false,reporting.logEverySteps=100", steps)
}

// `helm test mnist` while the cluster trains; `kubectl delete pod mnist-ps-1` a fifth into the
// run: the StatefulSet makes a new mnist-ps-1, which restores its checkpoint; then `kubectl
// delete pod mnist-worker-1`: a new worker 1 joins the run. The run completes at its last step.
// Then, with the ps gone, the chart's test pod fails.
func TestHelmTestAndDeletedPods(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-faults", deletedPodsRun)
	r.install(joinedRun(deletedPodsRun)...)
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

	deleteAt := r.waitStep("mnist-ps-1", deletedPodsRun/5)
	after := deletePod(t, r, "mnist-ps-1", before)
	ps1, err := r.podFacts("mnist-ps-1")
	if err != nil || len(ps1.Restored) != 1 {
		t.Fatalf("the new mnist-ps-1 did not restore a checkpoint once (%v): %s", err, harness.Lines(ps1.Restored))
	}
	if step := ps1.Restored[0].Step; step < deleteAt || step >= deletedPodsRun {
		t.Errorf("the new mnist-ps-1 restored global step %d; it was at %d when deleted", step, deleteAt)
	}
	t.Log(harness.Lines(ps1.Restored))

	// Soon after, so that most of the run is left for the new worker 1, whose pod may wait
	// minutes for CPU on a busy cluster.
	r.waitStep("mnist-ps-1", deleteAt+deletedPodsRun/10)
	deletePod(t, r, "mnist-worker-1", after)
	r.waitCompleted()
	if w1, err := r.podFacts("mnist-worker-1"); err != nil || len(w1.Steps) == 0 {
		t.Errorf("the new mnist-worker-1 recorded no training step (%v)", err)
	}
	assertNotRestarted(t, r)
	assertTestFailsWithoutPS(t, r)
}

// assertTestFailsWithoutPS scales the ps StatefulSet to 0 and runs the chart's test pod, rendered
// with a 3 s timeout (`helm template --show-only`), as a plain pod: it fails within its timeout
// and 15 s, with exit code 4 and pstrain's one line naming a ps it could not reach.
func assertTestFailsWithoutPS(t *testing.T, r *release) {
	t.Helper()
	res := kind.Kubectl("scale", "statefulset", "mnist-ps", "--namespace", r.namespace, "--replicas=0")
	if res.Err != nil {
		t.Fatal(res)
	}
	r.waitGone(psPods...)
	const timeout = 3
	res = r.helm("template", "--set", fmt.Sprintf("hyperparams.trainsteps=%d,test.timeoutSeconds=%d", r.trainSteps, timeout),
		"--show-only", "templates/tests/pod.yaml")
	manifest := filepath.Join(t.TempDir(), "test-pod.yaml")
	if res.Err != nil || os.WriteFile(manifest, []byte(res.Stdout), 0o644) != nil {
		t.Fatalf("helm template --show-only templates/tests/pod.yaml:\n%s", res)
	}
	// The pod of the helm test above is still there: helm deletes it only before the next test.
	if res := kind.Kubectl("delete", "pod", "--namespace", r.namespace, "--ignore-not-found", "mnist-test"); res.Err != nil {
		t.Fatal(res)
	}
	if res := kind.Kubectl("create", "--namespace", r.namespace, "--filename", manifest); res.Err != nil {
		t.Fatal(res)
	}
	var pod corev1.Pod
	err := cluster.Until(2*time.Minute, "the test pod's end", func() (bool, string, error) {
		res := kind.Kubectl("get", "pod", "--namespace", r.namespace, "mnist-test", "--output", "json")
		if err := json.Unmarshal([]byte(res.Stdout), &pod); res.Err != nil || err != nil {
			return false, res.String(), nil
		}
		return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded, cluster.Describe(pod), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ended := terminated(pod, "status")
	logs := kind.Kubectl("logs", "--namespace", r.namespace, "mnist-test")
	lines := strings.Split(strings.TrimRight(logs.Stdout, "\n"), "\n")
	oneLine := regexp.MustCompile(fmt.Sprintf(`^pstrain: mnist-ps-[01]\.mnist-ps:8090: .+ after waiting %d s$`, timeout))
	if ended == nil || ended.ExitCode != 4 || len(lines) != 1 || !oneLine.MatchString(lines[0]) {
		t.Fatalf("the test pod without the ps: %s; want exit code 4 and one line naming a ps:\n%s", cluster.Describe(pod), logs)
	}
	if took := ended.FinishedAt.Sub(ended.StartedAt.Time); took > (timeout+15)*time.Second {
		t.Errorf("the test pod without the ps ran %v, more than its timeout and 15 s", took)
	}
	t.Logf("the test pod without the ps: %s in %v: %s", ended.Reason, ended.FinishedAt.Sub(ended.StartedAt.Time), lines[0])
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
