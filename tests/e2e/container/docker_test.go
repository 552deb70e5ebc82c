package container_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pstrain/tests/e2e/harness"
	"pstrain/tests/e2e/podrun"
)

// network is the Docker network the pods run on.
const network = "pstrain-e2e"

// dockerCluster is harness.Cluster on Docker: `helm template` renders the chart, podrun runs its
// pods as containers (each named after its pod, so `docker exec mnist-ps-1 …` is `kubectl exec`)
// and is their kubelet, running their probes. The node is a directory of the test's.
type dockerCluster struct {
	t    *testing.T
	node string // the node's filesystem root

	rendered   string // the manifests of the last Install or render
	trainSteps int
	kubelet    *podrun.Cluster
	probes     context.Context    // the kubelet's probes run until it ends
	stop       context.CancelFunc // ends it

	mu     sync.Mutex
	report strings.Builder // what podrun did, shown when the test fails
}

// newDockerCluster is an empty cluster on a new node directory; what the test started on it is
// removed at the test's end.
func newDockerCluster(t *testing.T) *dockerCluster {
	t.Helper()
	c := &dockerCluster{t: t, node: t.TempDir()}
	if err := podrun.Down(network); err != nil { // what a run that was killed left behind
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.stopKubelet()
		if t.Failed() {
			t.Logf("podrun's report:\n%s", lastLines(c.reportText(), 80))
		}
		if err := podrun.Down(network); err != nil {
			t.Error(err)
		}
	})
	return c
}

// render is `helm template` of the chart with values.yml, the image under test and the values
// set; Install and start use its manifests.
func (c *dockerCluster) render(ctx context.Context, set ...string) (string, error) {
	repository, tag, _ := strings.Cut(image, ":")
	args := []string{"template", "mnist", "chart", "--values", "values.yml"}
	for _, role := range []string{"ps", "worker"} {
		args = append(args, "--set", fmt.Sprintf("%[1]s.image.repository=%[2]s,%[1]s.image.tag=%[3]s,%[1]s.image.pullPolicy=Never", role, repository, tag))
	}
	cmd := exec.CommandContext(ctx, helm, append(args, set...)...)
	cmd.Dir = repo
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	c.rendered = stdout.String()
	return c.rendered, nil
}

// start starts the pods of the named StatefulSets (all when none is named) of the manifests
// render made last, with podrun as their kubelet, which probes them until Uninstall or the
// test's end.
func (c *dockerCluster) start(statefulSets ...string) error {
	if c.kubelet == nil {
		m, err := podrun.ReadManifests(strings.NewReader(c.rendered))
		if err != nil {
			return err
		}
		if c.trainSteps, err = harness.TrainSteps(c.rendered); err != nil {
			return err
		}
		c.kubelet = podrun.New(podrun.Config{Network: network, NodeRoot: c.node, Report: c.record}, m)
		c.probes, c.stop = context.WithCancel(context.Background())
	}
	before := len(c.reportText())
	err := c.kubelet.Start(c.probes, uint64(time.Now().UnixNano()), statefulSets...)
	for _, line := range strings.Split(c.reportText()[before:], "\n") {
		if strings.HasPrefix(line, "starting ") {
			c.t.Log("podrun: " + line)
		}
	}
	return err
}

// Install renders the chart and starts its pods. Pods on Kubernetes take the UID of the
// ConfigMap each install creates as their run id; podrun has no API server to read one from, so
// each install is given an id of its own, as a new ConfigMap's UID would be.
func (c *dockerCluster) Install(ctx context.Context, set ...string) error {
	runID := fmt.Sprintf("install-%d", time.Now().UnixNano())
	if _, err := c.render(ctx, append([]string{"--set", "runId=" + runID}, set...)...); err != nil {
		return err
	}
	return c.start()
}

func (c *dockerCluster) TrainSteps() int { return c.trainSteps }

// stopKubelet ends the probes, so that none restarts a container being stopped.
func (c *dockerCluster) stopKubelet() {
	if c.kubelet != nil {
		c.stop()
		c.kubelet.Wait()
	}
}

// Uninstall is helm uninstall: the pods are deleted (SIGTERM, then their grace period), their
// containers and the network removed; the node directory stays.
func (c *dockerCluster) Uninstall(ctx context.Context) error {
	c.stopKubelet()
	c.kubelet = nil
	if _, err := docker(ctx, append([]string{"stop"}, harness.AllPods...)...); err != nil {
		return err
	}
	return podrun.Down(network)
}

func (c *dockerCluster) Pods(ctx context.Context) (map[string]harness.Pod, error) {
	pods := map[string]harness.Pod{}
	for _, name := range harness.AllPods {
		out, err := docker(ctx, "inspect", "--format", "{{.State.Status}} {{.RestartCount}} {{.State.OOMKilled}} {{.State.ExitCode}}", name)
		if err != nil && strings.Contains(err.Error(), "No such object") {
			continue // no such pod
		} else if err != nil {
			return nil, err
		}
		p := harness.Pod{Name: name}
		var status string
		if _, err := fmt.Sscan(out, &status, &p.Restarts, &p.OOMKilled, &p.ExitCode); err != nil {
			return nil, fmt.Errorf("docker inspect %s: %q: %v", name, out, err)
		}
		p.Running = status == "running"
		if c.kubelet != nil {
			p.Restarts += c.kubelet.LivenessRestarts(name)
			p.Ready = c.kubelet.Ready(name)
		}
		p.Summary = fmt.Sprintf("%s: %s restarts=%d oomkilled=%t exit=%d ready=%t", name, status, p.Restarts, p.OOMKilled, p.ExitCode, p.Ready)
		pods[name] = p
	}
	return pods, nil
}

func (c *dockerCluster) Exec(ctx context.Context, pod string, command ...string) (string, error) {
	return docker(ctx, append([]string{"exec", pod}, command...)...)
}

// DeletePod is the pod's container killed (SIGKILL, exit code 137), then the pod recreated as
// its StatefulSet does: same hostname, DNS names and node directory.
func (c *dockerCluster) DeletePod(ctx context.Context, pod string) error {
	if _, err := docker(ctx, "kill", pod); err != nil {
		return err
	}
	if out, err := docker(ctx, "wait", pod); err != nil || strings.TrimSpace(out) != "137" {
		return fmt.Errorf("docker wait %s: exit code %s, not 137 (%v)", pod, strings.TrimSpace(out), err)
	}
	c.t.Logf("docker kill %s: exit code 137", pod)
	return c.kubelet.Recreate(pod)
}

// Test is helm test: podrun runs the chart's test pod to its end, within ctx's deadline.
func (c *dockerCluster) Test(ctx context.Context) (string, error) {
	return runTest(ctx, c.kubelet)
}

func runTest(ctx context.Context, kubelet *podrun.Cluster) (string, error) {
	timeout := 5 * time.Minute // helm test's default
	if deadline, set := ctx.Deadline(); set {
		timeout = time.Until(deadline)
	}
	results, err := kubelet.Test(timeout)
	var output strings.Builder
	for _, r := range results {
		output.WriteString(r.Output)
	}
	return output.String(), err
}

// LogDir is the node directory of values.yml's log volume (hostPath /tmp/mnist) for the pods'
// namespace: pod P writes P/deploy.log there.
func (c *dockerCluster) LogDir() string { return filepath.Join(c.node, "tmp/mnist/default") }

func (c *dockerCluster) record(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.report.WriteString(line + "\n")
}

func (c *dockerCluster) reportText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report.String()
}

// docker runs the docker CLI and returns its standard output; the error carries standard error.
func docker(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("docker %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

var _ harness.Cluster = (*dockerCluster)(nil)
