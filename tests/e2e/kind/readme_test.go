package kind_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"pstrain/tests/e2e/cluster"
)

// The README's commands in the default namespace: kind load docker-image, helm install with
// values.yml (only the image set), the pods spread over the worker nodes, each pod as values.yml
// and the chart make it, training to its last step, kubectl exec … tail of ps 1's log, one log
// directory per pod on the host with only its own events, the run's end recorded in each, helm
// uninstall: every pod stops on SIGTERM with exit code 0.
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
	// The chart's default soft anti-affinity asks the scheduler to spread each role's pods over the
	// nodes; it is a preference, which the scheduler weighs against the CPU the other scenarios'
	// releases hold (both ps once landed on one node), so the pods carry it and no more is asked.
	for _, p := range allPods {
		if a := pods[p].Spec.Affinity; a == nil || a.PodAntiAffinity == nil ||
			len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
			t.Errorf("%s has no soft anti-affinity:\n%s", p, describeAll(pods))
		}
	}

	assertPodSpecs(t, r, pods)
	r.waitCompleted()

	tail := r.execShowing("mnist-ps-1", fmt.Sprintf("PS 1: global step %d done", r.trainSteps), "tail", podLog)
	if tail.Err != nil || !strings.Contains(tail.Stdout, fmt.Sprintf("PS 1: global step %d done", r.trainSteps)) ||
		regexp.MustCompile(`(PS 0|Worker \d+):`).MatchString(tail.Stdout) {
		t.Errorf("kubectl exec mnist-ps-1 -- tail %s does not show ps 1's global steps up to %d:\n%s",
			podLog, r.trainSteps, tail)
	} else {
		t.Logf("kubectl exec mnist-ps-1 -- tail %s:\n%s", podLog, tail.Stdout)
	}

	// A worker records its end once it has stopped training, which may be after worker 0's.
	err = cluster.Until(time.Minute, "the end of the run in every pod's events on the host", func() (bool, string, error) {
		var said []string
		for _, p := range allPods {
			f, err := r.nodeFacts(p)
			if err != nil || f.Starts != 1 || len(f.Others) > 0 {
				return false, "", fmt.Errorf("%s's events.jsonl on the host: %d starts, events of others: %v (%v)", p, f.Starts, f.Others, err)
			}
			if f.RunsEnded != 1 {
				said = append(said, fmt.Sprintf("%s: %d runs ended", p, f.RunsEnded))
			}
		}
		return len(said) == 0, strings.Join(said, "\n"), nil
	})
	if err != nil {
		t.Error(err)
	}
	entries, err := os.ReadDir(r.logDir())
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	if err != nil || !slices.Equal(dirs, allPods) {
		t.Errorf("%s holds %v (%v), not a directory for each of %v", r.logDir(), dirs, err, allPods)
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

	assertStopsOnUninstall(t, r)
}

// assertPodSpecs checks each pod's pstrain container as the API server holds it: values.yml's
// limits (200m CPU, 125Mi), user 10001, a read-only root file system, every capability dropped,
// the pod's name as its hostname (which the daemon takes its role from); and, from its events,
// that OpenBLAS runs one thread: threads beyond the CPU limit only wait for work, spinning away
// the quota.
func assertPodSpecs(t *testing.T, r *release, pods map[string]corev1.Pod) {
	t.Helper()
	for _, name := range allPods {
		p := pods[name]
		i := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "pstrain" })
		if i < 0 {
			t.Errorf("%s has no container pstrain", name)
			continue
		}
		c := p.Spec.Containers[i]
		cpu, memory := c.Resources.Limits[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory]
		var user *int64 // the container's, else the pod's
		if sc := p.Spec.SecurityContext; sc != nil {
			user = sc.RunAsUser
		}
		sc := deref(c.SecurityContext)
		if sc.RunAsUser != nil {
			user = sc.RunAsUser
		}
		got := fmt.Sprintf("cpu=%s memory=%s user=%d readOnlyRoot=%t drop=%v hostname=%s",
			cpu.String(), memory.String(), deref(user), deref(sc.ReadOnlyRootFilesystem),
			deref(sc.Capabilities).Drop, p.Spec.Hostname)
		if want := "cpu=200m memory=125Mi user=10001 readOnlyRoot=true drop=[ALL] hostname=" + name; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
		if res := r.execShowing(name, name, "cat", "/proc/sys/kernel/hostname"); strings.TrimSpace(res.Stdout) != name {
			t.Errorf("%s's hostname in the pod:\n%s", name, res)
		}
		if f, err := r.podFacts(name); err != nil || f.BlasThreads != 1 {
			t.Errorf("%s runs %d BLAS threads (%v), want 1", name, f.BlasThreads, err)
		}
	}
}

func deref[T any](v *T) (zero T) {
	if v == nil {
		return zero
	}
	return *v
}

// assertStopsOnUninstall is `helm uninstall`, watching the pods as the API server shows them
// until they are gone: each pod's process records that SIGTERM stopped it, and its container's
// last state before the pod went is an exit with code 0.
func assertStopsOnUninstall(t *testing.T, r *release) {
	t.Helper()
	watch, err := r.watchPods(allPods...)
	if err != nil {
		t.Fatal(err)
	}
	r.uninstall()
	last := watch.stop(allPods...)
	for _, name := range allPods {
		f, err := r.nodeFacts(name)
		if err != nil || !f.Stopped {
			t.Errorf("%s recorded no stopped event (%v)", name, err)
		}
		p, seen := last[name]
		if !seen {
			t.Errorf("%s: the watch saw no deletion", name)
			continue
		}
		if ended := terminated(p, "pstrain"); ended == nil || ended.ExitCode != 0 {
			t.Errorf("%s's last state, before it was deleted: %s", name, cluster.Describe(p))
		}
	}
}
