// Package cluster drives a Kubernetes cluster the way the project's README tells a user to: with
// kubectl, helm and kind on the command line. The end-to-end tests use it to run the README's
// commands against a real cluster and look at what a user would see: command output and exit
// codes, pod phases, restarts and logs.
//
// The cluster is described by environment variables (ci/kind-e2e.sh sets them):
//
//	PSTRAIN_KIND_CLUSTER     kind cluster name
//	PSTRAIN_KIND_KUBECONFIG  its kubeconfig
//	PSTRAIN_KIND_BIN         directory holding kind, kubectl and helm
//	PSTRAIN_KIND_IMAGE       the pstrain image under test, on this machine's Docker
//	PSTRAIN_KIND_LOG_DIR     this machine's directory that is every worker node's /tmp/mnist
package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Cluster is a running cluster and the tools that drive it.
type Cluster struct {
	Name       string
	Kubeconfig string
	Bin        string
	Image      string
	LogDir     string
	// The history checker (daemon/tests/tools: history_check) a scenario runs on its pods' logs.
	HistoryCheck string
}

// FromEnv is the cluster the environment names; an error says which variable is missing.
func FromEnv() (*Cluster, error) {
	c := &Cluster{}
	for _, v := range []struct {
		name string
		to   *string
	}{
		{"PSTRAIN_KIND_CLUSTER", &c.Name},
		{"PSTRAIN_KIND_KUBECONFIG", &c.Kubeconfig},
		{"PSTRAIN_KIND_BIN", &c.Bin},
		{"PSTRAIN_KIND_IMAGE", &c.Image},
		{"PSTRAIN_KIND_LOG_DIR", &c.LogDir},
		{"PSTRAIN_HISTORY_CHECK", &c.HistoryCheck},
	} {
		*v.to = os.Getenv(v.name)
		if *v.to == "" {
			return nil, fmt.Errorf("%s is not set (ci/kind-e2e.sh starts a cluster and sets it)", v.name)
		}
	}
	return c, nil
}

// Result is what a command printed and how it ended.
type Result struct {
	Command string
	Stdout  string
	Stderr  string // warnings too, such as kubectl's "Defaulted container …"
	Err     error  // nil when the command exited 0
}

// ExitCode is the command's exit code, -1 when it could not run or was killed.
func (r Result) ExitCode() int {
	var exit *exec.ExitError
	if r.Err == nil {
		return 0
	}
	if errors.As(r.Err, &exit) {
		return exit.ExitCode()
	}
	return -1
}

func (r Result) String() string {
	return fmt.Sprintf("$ %s\n%s%s(exit code %d)", r.Command, r.Stdout, r.Stderr, r.ExitCode())
}

// Run runs one of the tools (kubectl, helm, kind) against the cluster, from the directory dir
// ("" is the current one), and waits for it to end.
func (c *Cluster) Run(dir, tool string, args ...string) Result {
	cmd := c.Command(dir, tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	return Result{Command: tool + " " + strings.Join(args, " "), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// Command is the command Run runs, for a tool whose output is read as it comes (kubectl get
// --watch): the caller starts it and ends it.
func (c *Cluster) Command(dir, tool string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.Bin, tool), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	return cmd
}

// Kubectl runs kubectl with args.
func (c *Cluster) Kubectl(args ...string) Result { return c.Run("", "kubectl", args...) }

// Pods are the pods of namespace that match the label selector, by name.
func (c *Cluster) Pods(namespace, selector string) (map[string]corev1.Pod, error) {
	r := c.Kubectl("get", "pods", "--namespace", namespace, "--selector", selector, "--output", "json")
	if r.Err != nil {
		return nil, errors.New(r.String())
	}
	var list corev1.PodList
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		return nil, fmt.Errorf("kubectl get pods: %v", err)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods, nil
}

// SpareLabel is the label, and the NoSchedule taint, of the worker node that ci/kind-e2e.sh adds
// to kind-config.yml's three: only pods that tolerate it run there, so that a scenario may stop
// that node without touching the others' pods.
const SpareLabel = "pstrain-e2e/spare"

// WorkerNodes are the names of the cluster's nodes of kind-config.yml that are not its control
// plane: all but the spare.
func (c *Cluster) WorkerNodes() ([]string, error) {
	return c.nodes("!node-role.kubernetes.io/control-plane,!" + SpareLabel)
}

// SpareNode is the name of the spare worker node (SpareLabel).
func (c *Cluster) SpareNode() (string, error) {
	nodes, err := c.nodes(SpareLabel)
	if err == nil && len(nodes) != 1 {
		err = fmt.Errorf("want one node labelled %s, have %v", SpareLabel, nodes)
	}
	if err != nil {
		return "", err
	}
	return nodes[0], nil
}

func (c *Cluster) nodes(selector string) ([]string, error) {
	r := c.Kubectl("get", "nodes", "--selector", selector, "--output", "jsonpath={.items[*].metadata.name}")
	if r.Err != nil {
		return nil, errors.New(r.String())
	}
	return strings.Fields(r.Stdout), nil
}

// Until calls check until it returns done, for at most timeout: after 1 s, then 2, 4 and every 5
// s. It fails with what check last said when the time is up, or at once when check returns an
// error (no point waiting). A check is mostly a kubectl exec into a pod, which costs the nodes'
// containerd, runc and kubelet a tenth of a second of CPU or more: at one a second, the waits of
// the parallel scenarios took more of the 2 cores than their pods' training did.
func Until(timeout time.Duration, what string, check func() (done bool, said string, err error)) error {
	deadline := time.Now().Add(timeout)
	pause := time.Second
	for {
		done, said, err := check()
		switch {
		case err == nil && done:
			return nil
		case err != nil:
			return fmt.Errorf("gave up waiting for %s: %v\n%s", what, err, said)
		case time.Now().After(deadline):
			return fmt.Errorf("no %s before the deadline:\n%s", what, said)
		}
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Second)
	}
}

// Ready says whether the pod runs with every container ready.
func Ready(p corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Describe is one line on the pod: phase, readiness, node, restarts and how containers last ended.
func Describe(p corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.Name, p.Status.Phase)
	if Ready(p) {
		b.WriteString(", ready")
	}
	if p.Spec.NodeName != "" {
		fmt.Fprintf(&b, ", on %s", p.Spec.NodeName)
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "; %s restarts=%d", s.Name, s.RestartCount)
		if w := s.State.Waiting; w != nil {
			fmt.Fprintf(&b, " waiting (%s: %s)", w.Reason, w.Message)
		}
		if t := s.State.Terminated; t != nil {
			fmt.Fprintf(&b, " ended %s (exit code %d)", t.Reason, t.ExitCode)
		}
		if t := s.LastTerminationState.Terminated; t != nil {
			fmt.Fprintf(&b, " last ended %s (exit code %d)", t.Reason, t.ExitCode)
		}
	}
	return b.String()
}
