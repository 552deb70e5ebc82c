package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The scenarios that mean the same on any Cluster. Each installs the chart; the caller gives a
// Cluster on which nothing is installed, and removes what the scenario leaves.

// TrainToTheLastStep installs the chart with values.yml as it is (only the image set): every pod
// becomes ready, training reaches its last global step and every pod records its end, `exec
// mnist-ps-1 tail` of its log shows ps 1's global steps up to the last, the node's log
// directory holds a directory per pod whose events are only that pod's, and no container was
// restarted or OOM-killed.
func TrainToTheLastStep(ctx context.Context, t *testing.T, c Cluster) {
	if err := c.Install(ctx); err != nil {
		t.Fatal(err)
	}
	last := c.TrainSteps()
	started := t.Run("every pod ready", func(t *testing.T) {
		if err := WaitReady(ctx, c, AllPods...); err != nil {
			t.Fatal(err, "\n", Tails(c, AllPods...))
		}
		t.Log("\n" + Summaries(ctx, c, AllPods...))
	})
	trained := started && t.Run("training reaches its last global step", func(t *testing.T) {
		r, err := WaitTrained(ctx, c, "")
		if err != nil {
			t.Fatal(err, "\n", Tails(c, AllPods...))
		}
		t.Logf("worker 0's result.json: global step %d, test accuracy %.4f, %.2f s of training", r.GlobalStep, r.TestAccuracy, r.TrainingElapsed)
	})
	if !trained {
		return
	}
	t.Run("every pod records the end of its training", func(t *testing.T) {
		if err := WaitEnded(ctx, c, 1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("exec mnist-ps-1 tail shows ps 1's global steps", func(t *testing.T) {
		out, err := c.Exec(ctx, "mnist-ps-1", "tail", PodLog)
		want := fmt.Sprintf("PS 1: global step %d done", last)
		if err != nil || !strings.Contains(out, want) || regexp.MustCompile(`(PS 0|Worker \d+):`).MatchString(out) {
			t.Fatalf("tail %s in mnist-ps-1: no %q, or lines of another process (%v):\n%s", PodLog, want, err, out)
		}
		t.Log("\n" + out)
	})
	t.Run("one log directory per pod on the node, each with only its pod's events", func(t *testing.T) {
		entries, err := os.ReadDir(c.LogDir())
		if err != nil {
			t.Fatal(err)
		}
		var dirs []string
		for _, e := range entries {
			dirs = append(dirs, e.Name())
		}
		if !slices.Equal(dirs, AllPods) {
			t.Errorf("%s holds %v, not a directory for each of %v", c.LogDir(), dirs, AllPods)
		}
		for _, pod := range AllPods {
			if f, err := PodFacts(c, pod); err != nil || f.Starts != 1 || len(f.Others) > 0 {
				t.Errorf("%s/events.jsonl: %d starts of %s, events of others: %v (%v)", pod, f.Starts, pod, f.Others, err)
			}
		}
	})
	t.Run("every pod ready, none restarted or OOM-killed", func(t *testing.T) {
		if broken, err := Unhealthy(ctx, c, AllPods...); err != nil || broken != "" {
			t.Fatal(err, broken)
		}
		if err := WaitReady(ctx, c, AllPods...); err != nil {
			t.Fatal(err)
		}
	})
}

// ReinstallTrainsANewRun installs the chart with values.yml, waits for the run to complete, and
// uninstalls it: the node keeps the completion record and the checkpoints. Installed again with
// the same values (a new run id), the new pods train a new run to its last step, not taking the
// old run's checkpoints and completion record for theirs (no ps restores a checkpoint).
func ReinstallTrainsANewRun(ctx context.Context, t *testing.T, c Cluster) {
	var first Result
	trained := t.Run("first install: the run completes", func(t *testing.T) {
		if err := installReady(ctx, c); err != nil {
			t.Fatal(err)
		}
		var err error
		if first, err = WaitTrained(ctx, c, ""); err != nil {
			t.Fatal(err, "\n", Tails(c, AllPods...))
		}
		if err := WaitEnded(ctx, c, 1); err != nil {
			t.Fatal(err)
		}
		t.Logf("run %s trained to global step %d and completed", first.RunID, first.GlobalStep)
	})
	if !trained {
		return
	}
	t.Run("after uninstall the node directory still holds the completion record and the checkpoints", func(t *testing.T) {
		if err := c.Uninstall(ctx); err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{"mnist-worker-0/completed.json", "mnist-ps-0/checkpoint.bin", "mnist-ps-1/checkpoint.bin"} {
			if _, err := os.Stat(filepath.Join(c.LogDir(), file)); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("second install, same values, same node directory: a new run trains to its last step", func(t *testing.T) {
		if err := installReady(ctx, c); err != nil {
			t.Fatal(err)
		}
		second, err := WaitTrained(ctx, c, first.RunID)
		if err != nil {
			t.Fatal(err, "\n", Tails(c, AllPods...))
		}
		t.Logf("run %s trained to global step %d", second.RunID, second.GlobalStep)
		for _, pod := range PSPods {
			if f, err := PodFacts(c, pod); err != nil || len(f.Restored) > 0 {
				t.Errorf("%s restored the first run's checkpoint (%v):\n%s", pod, err, Lines(f.Restored))
			}
		}
	})
	t.Run("ps 0's events hold the end of both runs", func(t *testing.T) {
		_, err := WaitFacts(ctx, c, "mnist-ps-0", "the end of the second run in ps 0's events",
			func(f Facts) bool { return f.RunsEnded == 2 })
		if err != nil {
			t.Fatal(err)
		}
	})
}

// installReady installs the chart with set and waits until every pod is ready: the waits for
// training take a pod that is not running for a broken one, and a new pod starts as Pending.
func installReady(ctx context.Context, c Cluster, set ...string) error {
	if err := c.Install(ctx, set...); err != nil {
		return err
	}
	if err := WaitReady(ctx, c, AllPods...); err != nil {
		return fmt.Errorf("%w\n%s", err, Tails(c, AllPods...))
	}
	return nil
}
