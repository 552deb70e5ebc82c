package kind_test

import (
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
)

// Pod Security admission, as chart/README.md describes it: in a namespace that enforces
// `baseline`, values.yml's hostPath log volume is refused (helm install warns, and the
// StatefulSets' pods are forbidden); with `--set logs.type=emptyDir`, which wins over values.yml's
// own hostPath volume, the release installs there and trains.
func TestPodSecurityBaseline(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-baseline", 200)
	r.enforcePodSecurity("baseline")
	// The refusal: helm install's warning says the pods "would violate" it, events that they violate it.
	const refusal = `PodSecurity "baseline:latest": hostPath volumes (volume "logs-volume")`
	res := r.install()
	// helm logs the API server's warning as it is, or quoted (`"Warning: … \"baseline:latest\" …"`).
	if !strings.Contains(strings.ReplaceAll(res.Stderr, `\"`, `"`), "would violate "+refusal) {
		t.Errorf("helm install in a baseline namespace did not warn %q:\n%s", "would violate "+refusal, res)
	}
	var messages string
	err := cluster.Until(startTimeout, "pods refused by Pod Security", func() (bool, string, error) {
		events := kind.Kubectl("get", "events", "--namespace", r.namespace, "--field-selector", "reason=FailedCreate",
			"--output", "jsonpath={range .items[*]}{.involvedObject.name}: {.message}{\"\\n\"}{end}")
		messages = events.Stdout
		return strings.Contains(messages, `pods "mnist-ps-0" is forbidden: violates `+refusal) &&
			strings.Contains(messages, `pods "mnist-worker-0" is forbidden: violates `+refusal), events.String(), events.Err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get events --field-selector reason=FailedCreate:\n%s", firstLines(messages, 2))
	if pods, err := r.pods(); err != nil || len(pods) != 0 {
		t.Errorf("pods were created in the baseline namespace: %v\n%s", err, describeAll(pods))
	}
	r.uninstall()

	res = r.install("--set", "logs.type=emptyDir")
	if strings.Contains(res.Stderr, "PodSecurity") {
		t.Errorf("helm install with emptyDir logs warned of Pod Security:\n%s", res)
	}
	r.waitReady(allPods...)
	r.waitCompleted()
	if tail := r.execShowing("mnist-ps-1", "PS 1: global step 200 done", "tail", podLog); tail.Err != nil || !strings.Contains(tail.Stdout, "PS 1: global step 200 done") {
		t.Errorf("kubectl exec mnist-ps-1 -- tail %s:\n%s", podLog, tail)
	}
	assertNotRestarted(t, r)
}

func firstLines(text string, n int) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
