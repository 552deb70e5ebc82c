package kind_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pstrain/tests/e2e/cluster"
)

// `kubectl scale statefulset mnist-worker --replicas=4` a tenth into the run, then back to
// values.yml's 2 as soon as the new workers train: workers 2 and 3 join the run under way and
// train, then leave it before its end (the last global step each recorded is below the run's).
// No pod restarts, ps 0's global step never goes back, and the run completes at exactly its last
// step. (Back to 1 worker at 100m, the rest of the run once outlasted the 8 minutes waited for
// its end.)
func TestScaleWorkersMidRun(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-scale", joinedRunSteps)
	r.install(joinedRun(joinedRunSteps)...)
	r.waitReady(allPods...)
	steps := r.watchStep("mnist-ps-0")
	defer steps.stop()

	r.waitStep("mnist-ps-0", joinedRunSteps/10)
	r.scaleWorkers(4)
	r.waitReady(append(allPods, "mnist-worker-2", "mnist-worker-3")...)
	r.waitTrained("mnist-worker-2", "mnist-worker-3")

	// Four workers train fast: waiting for a given step could miss the run's end.
	r.scaleWorkers(2)
	left := []string{"mnist-worker-2", "mnist-worker-3"}
	r.waitGone(left...)
	r.waitCompleted()
	for _, w := range left {
		if f, err := r.nodeFacts(w); err != nil || f.Step >= joinedRunSteps {
			t.Errorf("%s left at global step %d, not before the run's end (%v)", w, f.Step, err)
		}
	}
	assertNotRestarted(t, r)
	steps.stop()
	if steps.wentBack != "" {
		t.Error(steps.wentBack)
	}
}

// `helm upgrade --set worker.number=3` a tenth into the run: the worker StatefulSet gets a third
// pod, which joins the run under way; no pod is replaced (the ConfigMap holds no worker count, so
// its checksum is the same) and the run completes at exactly its last step.
func TestHelmUpgradeAddsAWorker(t *testing.T) {
	t.Parallel()
	r := newRelease(t, "pstrain-upgrade-workers", joinedRunSteps)
	r.install(joinedRun(joinedRunSteps)...)
	before := r.waitReady(allPods...)
	r.waitStep("mnist-ps-0", joinedRunSteps/10)

	res := r.helm("upgrade", append(joinedRun(joinedRunSteps), "--set", "worker.number=3")...)
	if res.Err != nil || !strings.Contains(res.Stdout, "REVISION: 2") {
		t.Fatalf("helm upgrade --set worker.number=3:\n%s", res)
	}
	after := r.waitReady(append(allPods, "mnist-worker-2")...)
	for _, p := range allPods {
		if after[p].UID != before[p].UID {
			t.Errorf("helm upgrade --set worker.number=3 replaced %s", p)
		}
	}
	r.waitTrained("mnist-worker-2")
	r.waitCompleted()
	assertNotRestarted(t, r)
}

// joinedRunSteps are the global steps of a run that workers join under way, at half of
// values.yml's CPU (100m). Beside a C++ build, 60,000 were too few: pods that start and stop
// slowly on a busy host (a new worker trained 2.5 minutes after the scale-up) let the run end
// before the new worker trained, or before the scaled-away ones left.
const joinedRunSteps = 100000

// joinedRun are the values of a run of steps that workers join under way: a long run whose
// workers have half of values.yml's CPU (100m), so that it outlasts a new pod's start on a busy
// machine (up to two minutes on 2 cores with the other scenarios, longer than the whole run at
// 200m).
func joinedRun(steps int) []string {
	return []string{"--set", asyncRunValues(steps), "--set", "worker.limit.cpu=100m"}
}

// scaleWorkers is `kubectl scale statefulset mnist-worker --replicas=N`.
func (r *release) scaleWorkers(replicas int) {
	r.t.Helper()
	res := kind.Kubectl("scale", "statefulset", "mnist-worker", "--namespace", r.namespace,
		fmt.Sprintf("--replicas=%d", replicas))
	if res.Err != nil || !strings.Contains(res.Stdout, "scaled") {
		r.t.Fatalf("kubectl scale statefulset mnist-worker --replicas=%d:\n%s", replicas, res)
	}
	r.t.Logf("kubectl scale statefulset mnist-worker --replicas=%d", replicas)
}

// waitTrained waits until each of the worker pods has recorded a training step of its own.
func (r *release) waitTrained(pods ...string) {
	r.t.Helper()
	for _, pod := range pods {
		err := cluster.Until(trainTimeout, pod+" trains", func() (bool, string, error) {
			if f, err := r.podFacts(pod); err == nil && len(f.Steps) > 0 {
				return true, "", nil
			}
			if state, _, said, _ := r.progress("mnist-ps-0"); state == "completed" {
				// Read once more: the read above may have failed (kubectl exec, on a busy
				// cluster) while the pod trained.
				f, err := r.podFacts(pod)
				if err == nil && len(f.Steps) > 0 {
					return true, "", nil
				}
				return false, said, fmt.Errorf("the run completed before %s trained (%v)", pod, err)
			}
			return false, "", nil
		})
		if err != nil {
			r.t.Fatal(err, "\n", r.tails(pod))
		}
	}
}

// waitGone waits until the pods no longer exist.
func (r *release) waitGone(names ...string) {
	r.t.Helper()
	err := cluster.Until(startTimeout, "pods "+strings.Join(names, ", ")+" gone", func() (bool, string, error) {
		pods, err := r.pods()
		if err != nil {
			return false, "", err
		}
		for _, name := range names {
			if _, ok := pods[name]; ok {
				return false, describeAll(pods), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// stepWatch reads a pod's global step every 3 seconds (a kubectl exec each, see cluster.Until),
// noting the first time it is lower than one read before.
type stepWatch struct {
	done     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	wentBack string
}

func (r *release) watchStep(pod string) *stepWatch {
	w := &stepWatch{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		highest := 0
		for {
			select {
			case <-w.done:
				return
			case <-time.After(3 * time.Second):
			}
			state, step, _, err := r.progress(pod)
			if err != nil || state == "" {
				continue // being replaced, or not answering this time
			}
			if step < highest && w.wentBack == "" {
				w.wentBack = fmt.Sprintf("%s's global step went back from %d to %d", pod, highest, step)
			}
			highest = max(highest, step)
		}
	}()
	return w
}

// stop ends the watch and waits for it; wentBack may be read afterwards.
func (w *stepWatch) stop() {
	w.once.Do(func() { close(w.done) })
	w.wg.Wait()
}
