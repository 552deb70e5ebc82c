package kind_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"pstrain/tests/e2e/cluster"
)

// The chart as GitOps tools use it, rendered without a cluster (`helm template`) and applied with
// `kubectl apply`: a second rendering applied a fifth into the run changes nothing and the run
// goes on to its last step; the manifests deleted and applied again are a new run, whose ps
// restore none of the first run's checkpoints still on the nodes. The run id is the UID of the
// release's ConfigMap, as each pod's log says.
func TestGitOpsReapplyKeepsTheRunAndRecreateStartsANewOne(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-gitops", longRun)
	// The chart's own auth Secret holds a key made at rendering: GitOps brings its own.
	if res := kind.Kubectl("create", "secret", "generic", "mnist-gitops-key", "--namespace", r.namespace,
		"--from-literal=key=a-key-kept-in-git-by-reference"); res.Err != nil {
		t.Fatal(res)
	}
	apply := func() string {
		t.Helper()
		manifests := r.render(t)
		res := kind.Kubectl("apply", "--namespace", r.namespace, "--filename", manifests)
		if res.Err != nil {
			t.Fatalf("kubectl apply:\n%s", res)
		}
		return res.Stdout
	}
	apply()
	first := r.waitReady(allPods...)
	firstUID := r.runID(t)
	r.waitStep("mnist-ps-0", longRun/5)

	if out := apply(); strings.Contains(out, "configured") || strings.Contains(out, "created") {
		t.Errorf("a second rendering applied changed the release:\n%s", out)
	}
	for _, p := range allPods {
		if pods, err := r.pods(); err != nil || pods[p].UID != first[p].UID {
			t.Errorf("%s was replaced by a re-apply (%v)", p, err)
		}
	}
	r.waitCompleted()

	if res := kind.Kubectl("delete", "--namespace", r.namespace, "--filename", r.render(t), "--wait", "--timeout", "2m"); res.Err != nil {
		t.Fatalf("kubectl delete:\n%s", res)
	}
	err := cluster.Until(2*time.Minute, "release's pods gone", func() (bool, string, error) {
		pods, err := r.pods()
		return err == nil && len(pods) == 0, describeAll(pods), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	apply()
	r.waitReady(allPods...)
	if second := r.runID(t); second == firstUID {
		t.Errorf("re-created manifests kept run id %s", second)
	}
	for _, ps := range psPods {
		if f, err := r.podFacts(ps); err != nil || len(f.Restored) != 0 {
			t.Errorf("%s of the new run restored a checkpoint (%v): %v", ps, err, f.Restored)
		}
	}
	r.waitCompleted()
}

// render is `helm template` of the release as a GitOps tool renders it, with no cluster to look
// in, written to a file of the test's.
func (r *release) render(t *testing.T) string {
	t.Helper()
	res := r.helm("template", "--set", fmt.Sprintf("hyperparams.trainsteps=%d", r.trainSteps),
		"--set", "auth.existingSecret=mnist-gitops-key")
	if res.Err != nil {
		t.Fatalf("helm template:\n%s", res)
	}
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(path, []byte(res.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var runIDLine = regexp.MustCompile(`run id ([0-9a-f-]+): the UID of ConfigMap mnist-config`)

// runID is the run id every pod logged, which must be the UID of the release's ConfigMap.
func (r *release) runID(t *testing.T) string {
	t.Helper()
	uid := kind.Kubectl("get", "configmap", "mnist-config", "--namespace", r.namespace, "--output", "jsonpath={.metadata.uid}")
	if uid.Err != nil || uid.Stdout == "" {
		t.Fatalf("the release's ConfigMap:\n%s", uid)
	}
	for _, p := range allPods {
		// The log directory outlives the pods: the last start's line is this install's.
		logged := runIDLine.FindAllStringSubmatch(r.exec(p, "cat", podLog).Stdout, -1)
		if len(logged) == 0 || logged[len(logged)-1][1] != uid.Stdout {
			t.Errorf("%s did not log run id %s, the ConfigMap's UID: %v", p, uid.Stdout, logged)
		}
	}
	return uid.Stdout
}
