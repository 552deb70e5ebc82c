// Package harness is what the end-to-end scenarios need from a cluster running the chart: the
// operations of Cluster, waits with context deadlines, and what the daemon reports, read in one
// place (facts.go).
package harness

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The pods of values.yml: 2 ps and 2 workers of release mnist.
var (
	PSPods     = []string{"mnist-ps-0", "mnist-ps-1"}
	WorkerPods = []string{"mnist-worker-0", "mnist-worker-1"}
	AllPods    = slices.Concat(PSPods, WorkerPods)
)

// PodLog is the pod's log, as values.yml mounts it.
const PodLog = "/tmp/mnist-log/deploy.log"

// Cluster is the chart's release mnist on a cluster, and the operations on it a user has.
type Cluster interface {
	// Install installs the chart as release mnist from chart/ with values.yml, the image under
	// test and the values set (helm --set arguments), and starts its pods; TrainSteps is then
	// the global steps the release trains for.
	Install(ctx context.Context, set ...string) error
	TrainSteps() int
	// Pods are the release's pods that exist, by name.
	Pods(ctx context.Context) (map[string]Pod, error)
	// Exec runs a command in a pod (kubectl exec) and returns its standard output;
	// the error carries its standard error and exit code.
	Exec(ctx context.Context, pod string, command ...string) (string, error)
	// LogDir is the directory on this machine holding the release's pod log directories:
	// LogDir/<pod>/deploy.log and events.jsonl, as the chart's hostPath volume leaves them on
	// the node.
	LogDir() string
	// Uninstall is `helm uninstall`: the pods go, what they wrote on the node stays.
	Uninstall(ctx context.Context) error
}

// Pod is a pod's state as kubectl get pod shows it.
type Pod struct {
	Name      string
	Running   bool // its container runs
	Ready     bool // its readiness probe succeeds
	Restarts  int  // its container's restarts, by its restart policy or its liveness probe
	OOMKilled bool
	Summary   string // one line on it, to explain a failure
}

// Healthy says whether the pod runs and has never been restarted or OOM-killed.
func (p Pod) Healthy() bool { return p.Running && p.Restarts == 0 && !p.OOMKilled }

// Until calls check every second until it returns done. It fails with what check last said
// when ctx ends, or at once when check returns an error (no point waiting). A check that ctx
// ended in the middle of does not count: what the one before said is reported.
func Until(ctx context.Context, what string, check func() (done bool, said string, err error)) error {
	last := ""
	for {
		done, said, err := check()
		switch {
		case err == nil && done:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("no %s before the deadline:\n%s", what, last)
		case err != nil:
			return fmt.Errorf("gave up waiting for %s: %v\n%s", what, err, said)
		}
		last = said
		select {
		case <-ctx.Done():
			return fmt.Errorf("no %s before the deadline:\n%s", what, last)
		case <-time.After(time.Second):
		}
	}
}

// Unhealthy describes the named pods that are missing, not running, restarted or OOM-killed;
// "" when there are none.
func Unhealthy(ctx context.Context, c Cluster, names ...string) (string, error) {
	pods, err := c.Pods(ctx)
	if err != nil {
		return "", err
	}
	var broken []string
	for _, name := range names {
		if p, found := pods[name]; !found {
			broken = append(broken, name+": missing")
		} else if !p.Healthy() {
			broken = append(broken, p.Summary)
		}
	}
	return strings.Join(broken, "\n"), nil
}

// Summaries is one line on each named pod.
func Summaries(ctx context.Context, c Cluster, names ...string) string {
	pods, err := c.Pods(ctx)
	if err != nil {
		return err.Error()
	}
	var lines []string
	for _, name := range names {
		if p, found := pods[name]; found {
			lines = append(lines, p.Summary)
		} else {
			lines = append(lines, name+": missing")
		}
	}
	return strings.Join(lines, "\n")
}

// WaitReady waits until the named pods run and are ready; it gives up when one of them has
// been restarted or OOM-killed.
func WaitReady(ctx context.Context, c Cluster, names ...string) error {
	return Until(ctx, "pods "+strings.Join(names, ", ")+" ready", func() (bool, string, error) {
		pods, err := c.Pods(ctx)
		if err != nil {
			return false, "", err
		}
		ready := true
		var said []string
		for _, name := range names {
			p, found := pods[name]
			if !found {
				ready = false
				said = append(said, name+": missing")
				continue
			}
			said = append(said, p.Summary)
			if p.Restarts > 0 || p.OOMKilled {
				return false, strings.Join(said, "\n"), errors.New(p.Summary)
			}
			ready = ready && p.Running && p.Ready
		}
		return ready, strings.Join(said, "\n"), nil
	})
}

// WaitFacts waits until pod's facts are as wanted; it gives up when a pod of the release is not
// healthy.
func WaitFacts(ctx context.Context, c Cluster, pod, what string, wanted func(Facts) bool) (Facts, error) {
	var f Facts
	err := Until(ctx, what, func() (bool, string, error) {
		if broken, err := Unhealthy(ctx, c, AllPods...); err != nil || broken != "" {
			return false, broken, errors.Join(err, errors.New("a pod is not healthy"))
		}
		var err error
		if f, err = PodFacts(c, pod); err != nil {
			return false, "", err
		}
		return wanted(f), fmt.Sprintf("%s: global step %d, checkpoint at %d", pod, f.Step, f.Checkpoint), nil
	})
	return f, err
}

// WaitTrained waits until worker 0's result.json is of a run other than notRun, at the last
// global step; it gives up when a pod of the release is not healthy, or worker 0 took an
// earlier run for its own.
func WaitTrained(ctx context.Context, c Cluster, notRun string) (Result, error) {
	var r Result
	err := Until(ctx, fmt.Sprintf("global step %d in worker 0's result.json", c.TrainSteps()), func() (bool, string, error) {
		if broken, err := Unhealthy(ctx, c, AllPods...); err != nil || broken != "" {
			return false, broken, errors.Join(err, errors.New("a pod is not healthy"))
		}
		if f, err := PodFacts(c, "mnist-worker-0"); err != nil {
			return false, "", err
		} else if f.CompletedAlready {
			return false, "", errors.New("worker 0 found its run completed already")
		}
		var err error
		if r, err = WorkerResult(c); err != nil {
			return false, err.Error(), nil
		}
		said := fmt.Sprintf("worker 0's result.json: run %s, global step %d", r.RunID, r.GlobalStep)
		return r.RunID != notRun && r.GlobalStep == c.TrainSteps(), said, nil
	})
	return r, err
}

// WaitEnded waits until every pod has recorded the end of runs runs: each ps at the last
// global step, each worker after its last step.
func WaitEnded(ctx context.Context, c Cluster, runs int) error {
	return Until(ctx, fmt.Sprintf("the end of run %d in every pod's events", runs), func() (bool, string, error) {
		var said []string
		ended := true
		for _, pod := range AllPods {
			f, err := PodFacts(c, pod)
			if err != nil {
				return false, "", err
			}
			said = append(said, fmt.Sprintf("%s: %d runs ended", pod, f.RunsEnded))
			ended = ended && f.RunsEnded >= runs
		}
		return ended, strings.Join(said, "\n"), nil
	})
}

var trainStepsLine = regexp.MustCompile(`(?m)^ *trainSteps: *(\d+)$`)

// TrainSteps is the global steps the chart's rendered ConfigMap trains for (helm template, or
// helm get manifest).
func TrainSteps(manifests string) (int, error) {
	m := trainStepsLine.FindStringSubmatch(manifests)
	if m == nil {
		return 0, errors.New("the chart's ConfigMap has no trainSteps")
	}
	return strconv.Atoi(m[1])
}
