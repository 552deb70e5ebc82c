package kind_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Placement as a user pins pods: two nodes labelled for the ps, one for the workers
// (`kubectl label nodes`), the ps pinned with ps.nodeSelector and spread with a hard
// anti-affinity, the workers pinned with worker.affinity. Every pod lands where its values say,
// and the run trains across the nodes to its last step.
func TestPlacement(t *testing.T) {
	t.Parallel()
	nodes, err := kind.WorkerNodes()
	if err != nil || len(nodes) != 3 {
		t.Fatalf("want the 3 worker nodes of kind-config.yml, have %v %v", nodes, err)
	}
	const key = "example.com/pool"
	psNodes, workerNode := nodes[:2], nodes[2]
	label := func(value string, nodes ...string) {
		t.Helper()
		if res := kind.Kubectl(append(append([]string{"label", "nodes", "--overwrite"}, nodes...), key+value)...); res.Err != nil {
			t.Fatal(res)
		}
	}
	t.Cleanup(func() { label("-", nodes...) })
	label("=ps", psNodes...)
	label("=workers", workerNode)

	placement := filepath.Join(t.TempDir(), "placement.yaml")
	err = os.WriteFile(placement, []byte(`ps:
  nodeSelector:
    `+key+`: ps
  podAntiAffinity: hard
worker:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions:
              - {key: `+key+`, operator: In, values: [workers]}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	r := newRelease(t, "pstrain-placement", 200)
	r.install("--values", placement)
	pods := r.waitReady(allPods...)
	t.Log("pods placed:\n" + describeAll(pods))
	ps0, ps1 := pods["mnist-ps-0"].Spec.NodeName, pods["mnist-ps-1"].Spec.NodeName
	if ps0 == ps1 || !slices.Contains(psNodes, ps0) || !slices.Contains(psNodes, ps1) {
		t.Errorf("the ps are on %s and %s; want one on each of %v", ps0, ps1, psNodes)
	}
	for _, w := range workerPods {
		if node := pods[w].Spec.NodeName; node != workerNode {
			t.Errorf("%s is on %s; want %s", w, node, workerNode)
		}
	}
	r.waitCompleted()
	assertNotRestarted(t, r)
}
