package kind_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pstrain/tests/e2e/cluster"
)

// The chart as chart/README.md ("GitOps") tells a GitOps user to apply it: a Secret of one's own
// for the key, the chart rendered without a cluster (`helm template --no-hooks` with
// auth.existingSecret) and `kubectl apply`. First everything but the ps StatefulSet: worker 0
// records that it waits for a ps DNS name while no ps pod exists, and no worker restarts; then
// all of it: the run trains. Rendered again a fifth into the run, the manifests are the same,
// byte for byte (the chart renders nothing random and looks nothing up), and applied they change
// nothing: no object changed (kubectl says so, or its generation does), no pod replaced or
// restarted, the ConfigMap's UID (the run id) kept, and the run goes on to exactly its last step.
// `kubectl delete -f` and apply again: a new ConfigMap, so a new run id, and a new run from step
// 0 that restores none of the first run's checkpoints.
func TestGitOpsWorkersFirstReapplyAndRecreate(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-gitops", longRun)
	if res := kind.Kubectl("create", "secret", "generic", "pstrain-key", "--namespace", r.namespace,
		"--from-literal=key=a-key-of-the-users-own"); res.Err != nil {
		t.Fatal(res)
	}
	rendered := r.render(t)
	all := r.manifests(t, "all.yaml", rendered)
	// The ps StatefulSet's document, as helm template heads it.
	psStatefulSet := regexp.MustCompile(`(?s)---\n# Source: pstrain/templates/ps/statefulset\.yaml\n.*?(\n---\n|$)`)
	if !psStatefulSet.MatchString(rendered) {
		t.Fatalf("no ps StatefulSet in helm template's output:\n%s", rendered)
	}
	r.apply(t, r.manifests(t, "workers-first.yaml", psStatefulSet.ReplaceAllString(rendered, "$1")))

	err := cluster.Until(startTimeout, "worker 0's waiting event for a ps DNS name", func() (bool, string, error) {
		pods, err := r.pods()
		if err != nil {
			return false, "", err
		}
		for _, ps := range psPods {
			if _, found := pods[ps]; found {
				return false, "", fmt.Errorf("%s exists", ps)
			}
		}
		if broken := restarted(pods); broken != "" {
			return false, "", fmt.Errorf("restarted: %s", broken)
		}
		f, err := r.podFacts("mnist-worker-0")
		return f.WaitingForDNS != "", fmt.Sprint(describeAll(pods), err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := r.podFacts("mnist-worker-0")
	t.Logf("no ps pod; worker 0: %s", f.WaitingForDNS)

	if out := r.apply(t, all); !strings.Contains(out, "statefulset.apps/mnist-ps created") {
		t.Errorf("kubectl apply of all the manifests did not create the ps StatefulSet:\n%s", out)
	}
	before := r.waitReady(allPods...)
	uid := r.runID(t)
	at := r.waitStep("mnist-ps-0", longRun/5)

	if again := r.render(t); again != rendered {
		t.Errorf("a second rendering differs from the first:\n%s", diffLines(rendered, again))
	}
	out := r.apply(t, r.manifests(t, "again.yaml", rendered))
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		// kubectl sends a PodDisruptionBudget's selector whole on every apply (its patch strategy
		// is replace) and says "configured"; the generations below show that nothing changed.
		pdb := strings.HasPrefix(line, "poddisruptionbudget.policy/") && strings.HasSuffix(line, " configured")
		if !pdb && !strings.HasSuffix(line, " unchanged") {
			t.Errorf("kubectl apply of the same manifests changed something: %q", line)
		}
	}
	generations := kind.Kubectl("get", "poddisruptionbudgets,statefulsets", "--namespace", r.namespace,
		"--output", `jsonpath={range .items[*]}{.kind}/{.metadata.name}:{.metadata.generation} {end}`)
	if want := "PodDisruptionBudget/mnist-ps:1 PodDisruptionBudget/mnist-worker:1 StatefulSet/mnist-ps:1 StatefulSet/mnist-worker:1 "; generations.Stdout != want {
		t.Errorf("after the second kubectl apply, generations %q, want %q:\n%s", generations.Stdout, want, generations)
	}
	after := r.waitReady(allPods...)
	for _, p := range allPods {
		if after[p].UID != before[p].UID {
			t.Errorf("%s was replaced by the second kubectl apply", p)
		}
	}
	// The same pods (above), so the same run id in their logs, if the ConfigMap kept its UID.
	if again := r.configMapUID(t); again != uid {
		t.Errorf("the second kubectl apply changed the run id from %s to %s", uid, again)
	}
	t.Logf("kubectl apply again at ps 0's global step %d: no object changed, run id %s", at, uid)
	r.waitCompleted()
	assertNotRestarted(t, r)
	for _, p := range allPods {
		if f, err := r.nodeFacts(p); err != nil || f.Starts != 1 || len(f.Restored) != 0 {
			t.Errorf("%s: %d starts, %d checkpoints restored (%v); want one start and none", p, f.Starts, len(f.Restored), err)
		}
	}

	if res := kind.Kubectl("delete", "--namespace", r.namespace, "--filename", all, "--wait", "--timeout", "2m"); res.Err != nil {
		t.Fatalf("kubectl delete -f:\n%s", res)
	}
	r.waitGone(allPods...)
	r.apply(t, all)
	r.waitReady(allPods...)
	if second := r.runID(t); second == uid {
		t.Errorf("the manifests deleted and applied again kept run id %s", uid)
	} else {
		t.Logf("kubectl delete -f, kubectl apply -f: run id %s", second)
	}
	r.waitStep("mnist-ps-0", 1)
	for _, ps := range psPods {
		f, err := r.podFacts(ps)
		if err != nil || len(f.Restored) != 0 || len(f.Steps) == 0 || f.Steps[0] >= longRun/10 {
			t.Errorf("%s of the new run: %d checkpoints restored, global steps from %v (%v); want none restored, from the start",
				ps, len(f.Restored), f.Steps[:min(1, len(f.Steps))], err)
		}
	}
	if f, err := r.podFacts("mnist-worker-0"); err != nil || f.CompletedAlready {
		t.Errorf("worker 0 took the new run for the completed one (%v)", err)
	}
}

// render is `helm template --no-hooks` of the release, as chart/README.md's "GitOps" says, with
// the Secret TestGitOps… created.
func (r *release) render(t *testing.T) string {
	t.Helper()
	res := r.helm("template", "--no-hooks", "--set", longRunValues(),
		"--set", "auth.existingSecret=pstrain-key")
	if res.Err != nil {
		t.Fatalf("helm template:\n%s", res)
	}
	return res.Stdout
}

// manifests writes manifests to a file of the test's, and returns its path.
func (r *release) manifests(t *testing.T, name, manifests string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apply is `kubectl apply -f FILE` in the release's namespace; it returns kubectl's output.
func (r *release) apply(t *testing.T, file string) string {
	t.Helper()
	res := kind.Kubectl("apply", "--namespace", r.namespace, "--filename", file)
	if res.Err != nil {
		t.Fatalf("kubectl apply:\n%s", res)
	}
	t.Logf("kubectl apply -f %s:\n%s", filepath.Base(file), res.Stdout)
	return res.Stdout
}

// runID is the UID of the release's ConfigMap, which every pod's log must name as its run id.
// Asked soon after the pods start: a long run's container log is rotated, its first lines gone.
func (r *release) runID(t *testing.T) string {
	t.Helper()
	uid := r.configMapUID(t)
	line := fmt.Sprintf("run id %s: the UID of ConfigMap mnist-config", uid)
	for _, p := range r.podNames() {
		if logs := kind.Kubectl("logs", "--namespace", r.namespace, p); !strings.Contains(logs.Stdout, line) {
			t.Errorf("%s's log does not say %q:\n%s", p, line, firstLines(logs.String(), 10))
		}
	}
	return uid
}

// configMapUID is the UID of the release's ConfigMap: the run id of pods started with it.
func (r *release) configMapUID(t *testing.T) string {
	t.Helper()
	res := kind.Kubectl("get", "configmap", "mnist-config", "--namespace", r.namespace, "--output", "jsonpath={.metadata.uid}")
	if res.Err != nil || res.Stdout == "" {
		t.Fatalf("the release's ConfigMap:\n%s", res)
	}
	return res.Stdout
}

// diffLines are the lines of a that b lacks and of b that a lacks.
func diffLines(a, b string) string {
	var out []string
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		for _, line := range strings.Split(pair[0], "\n") {
			if !strings.Contains(pair[1], line) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "\n")
}
