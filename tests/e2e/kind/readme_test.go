package kind_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
)

// The README's commands in the default namespace: kind load docker-image, helm install with
// values.yml (only the image set), the pods spread over the worker nodes, training to its last
// step, kubectl exec … tail of ps 1's log, each pod's own log directory on the host, helm
// uninstall.
func TestReadme(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "default", 200) // values.yml's hyperparams.trainsteps
	res := r.install()
	if !strings.Contains(res.Stdout, "STATUS: deployed") ||
		!strings.Contains(res.Stdout, "pstrain is starting 2 parameter server(s) (mnist-ps-N) and 2 worker(s) (mnist-worker-N)") {
		t.Errorf("helm install did not report the release deployed with its NOTES:\n%s", res)
	}

	pods := r.waitReady(allPods...)
	t.Log("helm install: " + strings.ReplaceAll(describeAll(pods), "\n", "\n    "))
	workers, err := kind.WorkerNodes()
	if err != nil {
		t.Fatal(err)
	}
	nodeOf := func(pod string) string { return pods[pod].Spec.NodeName }
	for _, p := range allPods {
		if !slices.Contains(workers, nodeOf(p)) {
			t.Errorf("%s is on %s, not on a worker node (%s)", p, nodeOf(p), strings.Join(workers, ", "))
		}
	}
	// The chart's default soft anti-affinity spreads each role's pods over the nodes.
	if nodeOf("mnist-ps-0") == nodeOf("mnist-ps-1") || nodeOf("mnist-worker-0") == nodeOf("mnist-worker-1") {
		t.Errorf("pods of one role share a node:\n%s", describeAll(pods))
	}

	r.waitCompleted()

	tail := r.exec("mnist-ps-1", "tail", podLog)
	if tail.Err != nil || !strings.Contains(tail.Stdout, fmt.Sprintf("PS 1: global step %d done", r.trainSteps)) ||
		regexp.MustCompile(`(PS 0|Worker \d+):`).MatchString(tail.Stdout) {
		t.Errorf("kubectl exec mnist-ps-1 -- tail %s does not show ps 1's global steps up to %d:\n%s",
			podLog, r.trainSteps, tail)
	} else {
		t.Logf("kubectl exec mnist-ps-1 -- tail %s:\n%s", podLog, tail.Stdout)
	}

	for _, p := range allPods {
		if f, err := r.nodeFacts(p); err != nil || f.Starts != 1 || len(f.Others) > 0 {
			t.Errorf("%s's events.jsonl on the host: %d starts, events of others: %v (%v)", p, f.Starts, f.Others, err)
		}
	}

	assertNotRestarted(t, r)
	if pods, err = r.pods(); err != nil {
		t.Fatal(err)
	}
	for _, p := range allPods {
		if !cluster.Ready(pods[p]) {
			t.Errorf("after training, %s", cluster.Describe(pods[p]))
		}
	}

	r.uninstall()
}
