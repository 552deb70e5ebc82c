package kind_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The chart's defaults with 4 workers (`--set worker.number=4`, nothing else of the mode set),
// spread over the nodes, each node's network capped at 1 Gbit/s as a cluster's cards are: every
// pod's started event says the sync mode that `sync: auto` chooses where each worker has CPUs of
// its own, and the default wire encodings; worker 0 moved at most an eighth of fp32's 814 KB a
// step; and the run ends at exactly its last global step.
func TestDefaultsTrainFourWorkersInSyncBehindAGigabitLink(t *testing.T) {
	t.Parallel()
	capNodeLinks(t, "1gbit")
	r := newRelease(t, "pstrain-mode", 400)
	r.install("--set", "hyperparams.trainsteps=400", "--set", "worker.number=4")
	pods := append(append([]string{}, psPods...), "mnist-worker-0", "mnist-worker-1", "mnist-worker-2", "mnist-worker-3")
	r.waitReady(pods...)
	r.waitCompleted()
	for _, pod := range pods {
		f, err := r.podFacts(pod)
		if err != nil || f.Starts != 1 || f.Mode != "sync" || f.PushEncoding != "log4" || f.PullEncoding != "q3" {
			t.Errorf("%s: %d starts, mode %q, %q pushes, %q answers; want one start in sync mode, "+
				"log4 pushes and q3 answers (%v)", pod, f.Starts, f.Mode, f.PushEncoding, f.PullEncoding, err)
		}
	}
	if res := r.result(); res.GlobalStep != 400 || res.BytesPerStep <= 0 || res.BytesPerStep > 102000 {
		t.Errorf("worker 0's result: global step %d, %.0f bytes a step; want 400 and at most 102,000",
			res.GlobalStep, res.BytesPerStep)
	}
	assertNotRestarted(t, r)
}

// capNodeLinks shapes the egress of every worker node's eth0 to rate (a token bucket, from the
// host into the node's network namespace), for the rest of the test: the bytes between pods on
// different nodes go through it, as through a node's network card.
func capNodeLinks(t *testing.T, rate string) {
	t.Helper()
	nodes, err := kind.WorkerNodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range nodes {
		out, err := exec.Command("docker", "inspect", "--format", "{{.State.Pid}}", node).Output()
		if err != nil {
			t.Fatalf("docker inspect %s: %v", node, err)
		}
		pid := strings.TrimSpace(string(out))
		tc := func(args ...string) ([]byte, error) {
			return exec.Command("nsenter", append([]string{"--target", pid, "--net", "tc"}, args...)...).CombinedOutput()
		}
		if out, err := tc("qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "256kb", "latency", "100ms"); err != nil {
			t.Fatalf("capping %s's eth0 at %s: %v\n%s", node, rate, err, out)
		}
		t.Cleanup(func() {
			if out, err := tc("qdisc", "del", "dev", "eth0", "root"); err != nil {
				t.Logf("removing %s's cap: %v\n%s", node, err, out)
			}
		})
	}
}
