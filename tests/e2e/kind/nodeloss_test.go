package kind_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pstrain/tests/e2e/cluster"
	"pstrain/tests/e2e/harness"
)

// A node lost with its disk. The release's first ps and first worker to be scheduled land on the
// spare node (their values tolerate its taint and prefer it; a required anti-affinity keeps the
// other ps and worker off it). A third into the run the node is stopped (`docker stop`), and the
// ps's directory in the nodes' shared /tmp/mnist deleted, as a lost disk would be. The test then
// does what docs/operations.md tells an operator: once the node shows NotReady, `kubectl delete
// node`. The StatefulSets make both pods anew on other nodes; the new ps finds no checkpoint and
// takes its shard from the worker that survived; the run completes at exactly its last step, with
// the test accuracy (within maxAccuracyCost) of the same values trained side by side without the
// fault.
// Every pod records the run's history (the lost ps's taken off before its directory goes), which
// holds no violated invariant at the end. Not parallel: go test runs it alone before the parallel scenarios start. Its two long runs and
// the spare node would add to a cluster already short of CPU: beside the others, its pods waited
// for CPU to be scheduled (the nodes' 6 CPUs are all requested), and the API server, starved,
// answered kubectl with TLS handshake timeouts.
// nodeLostRun are the global steps of its runs. Once the node stops, the run waits for the new ps,
// so any length outlasts the loss, and what follows the recovery only has to reach the end: with
// 20,000 steps the scenario took 180-193 s on 2 cores, node loss and recovery included.
const nodeLostRun = 20000

func TestNodeLost(t *testing.T) {
	node, err := kind.SpareNode()
	if err != nil {
		t.Fatal(err)
	}
	steps := asyncRunValues(nodeLostRun)
	reference := newRelease(t, "pstrain-node-kept", nodeLostRun)
	reference.install("--set", steps)
	r := newRelease(t, "pstrain-node-lost", nodeLostRun)
	r.install(append([]string{"--set", steps, "--values", spareValues(t)}, recordHistory...)...)
	before := r.waitReady(allPods...)
	ps, worker := onNode(t, before, psPods, node), onNode(t, before, workerPods, node)
	t.Logf("%s holds %s and %s", node, ps, worker)

	r.waitStep(ps, nodeLostRun/3)
	stopped := time.Now()
	if out, err := exec.Command("docker", "stop", node).CombinedOutput(); err != nil {
		t.Fatalf("docker stop %s: %v\n%s", node, err, out)
	}
	// The ps's last step on its disk before it goes: a checkpoint at SIGTERM, if it had the time.
	lost, err := r.nodeFacts(ps)
	if err != nil {
		t.Fatal(err)
	}
	// The history of what it did goes elsewhere first, as a record shipped off the node would.
	lostHistory := t.TempDir()
	if err := os.Rename(filepath.Join(r.logDir(), ps, "history.bin"), filepath.Join(lostHistory, "history.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(r.logDir(), ps)); err != nil {
		t.Fatal(err)
	}
	waitNotReady(t, node)
	notReady := time.Since(stopped)
	if res := kind.Kubectl("delete", "node", node); res.Err != nil {
		t.Fatalf("kubectl delete node:\n%s", res)
	}
	deleted := time.Now()
	after := r.waitReplaced(before, ps, worker)
	for _, p := range []string{ps, worker} {
		if on := after[p].Spec.NodeName; on == node {
			t.Errorf("the new %s is on %s, the lost node", p, on)
		}
	}
	t.Logf("docker stop %s at %s's global step %d; NotReady after %.0f s; kubectl delete node; "+
		"the new pods ready %.0f s later:\n%s", node, ps, lost.Step, notReady.Seconds(),
		time.Since(deleted).Seconds(), describeAll(after))

	r.waitCompleted()
	reference.waitCompleted()
	f, err := r.nodeFacts(ps)
	if err != nil || f.Starts != 1 || len(f.Restored) != 0 || len(f.Recovered) != 1 {
		t.Fatalf("the new %s: want one start, no checkpoint restored and one shard recovered from a worker (%v): %s",
			ps, err, harness.Lines(append(f.Restored, f.Recovered...)))
	}
	if at := f.Recovered[0].Step; at <= 0 || at > lost.Step {
		t.Errorf("the new %s recovered its shard at global step %d; it was at %d when its node stopped", ps, at, lost.Step)
	}
	faulty, kept := r.result(), reference.result()
	t.Logf("%s recovered at global step %d from %s (%d steps lost); test accuracy %.4f, without the fault %.4f",
		ps, f.Recovered[0].Step, f.Recovered[0].Peer, lost.Step-f.Recovered[0].Step, faulty.TestAccuracy, kept.TestAccuracy)
	if cost := accuracyCost(faulty, kept); cost > maxAccuracyCost {
		t.Errorf("test accuracy %.4f after the lost node, %.4f without: the loss cost %.4f, more than %.3f", faulty.TestAccuracy, kept.TestAccuracy, cost, maxAccuracyCost)
	}
	assertNotRestarted(t, r)
	r.checkHistory(lostHistory)
}

// spareValues is a values file that puts the first ps and the first worker scheduled on the spare
// node, and the others elsewhere.
func spareValues(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, role := range []string{"ps", "worker"} {
		fmt.Fprintf(&b, `%[1]s:
  tolerations:
    - {key: %[2]s, operator: Exists, effect: NoSchedule}
  affinity:
    nodeAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          preference:
            matchExpressions:
              - {key: %[2]s, operator: Exists}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels: {app.kubernetes.io/instance: %[3]s, app.kubernetes.io/component: %[1]s}
`, role, cluster.SpareLabel, releaseName)
	}
	path := filepath.Join(t.TempDir(), "spare.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// onNode is the one pod of names on node.
func onNode(t *testing.T, pods map[string]corev1.Pod, names []string, node string) string {
	t.Helper()
	var on []string
	for _, name := range names {
		if pods[name].Spec.NodeName == node {
			on = append(on, name)
		}
	}
	if len(on) != 1 {
		t.Fatalf("want one of %v on %s, have %v:\n%s", names, node, on, describeAll(pods))
	}
	return on[0]
}

// waitNotReady waits until the node's Ready condition is no longer True, as `kubectl get nodes`
// shows an operator.
func waitNotReady(t *testing.T, node string) {
	t.Helper()
	err := cluster.Until(startTimeout, node+" NotReady", func() (bool, string, error) {
		res := kind.Kubectl("get", "node", node, "--output", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		return res.Err == nil && res.Stdout != "True", res.String(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitReplaced waits until the named pods are new ones (another UID) and every pod of the release
// is ready; it returns the pods then.
func (r *release) waitReplaced(before map[string]corev1.Pod, names ...string) map[string]corev1.Pod {
	r.t.Helper()
	var pods map[string]corev1.Pod
	err := cluster.Until(startTimeout, strings.Join(names, ", ")+" replaced", func() (bool, string, error) {
		var err error
		if pods, err = r.pods(); err != nil {
			return false, "", err
		}
		for _, name := range names {
			if p, ok := pods[name]; !ok || p.UID == before[name].UID {
				return false, describeAll(pods), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		r.t.Fatal(err, "\n", r.events())
	}
	return r.waitReady(allPods...)
}
