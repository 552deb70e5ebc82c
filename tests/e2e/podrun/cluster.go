// Package podrun runs the pods of a rendered chart's StatefulSets, and its helm test pods, as
// Docker containers the way a kubelet would, for end-to-end tests on a machine without
// Kubernetes: each pod in the network namespace of a sandbox container that holds its address,
// hostname and headless-Service DNS names on a user-defined Docker network, with its init
// containers, environment (downward API), limits, security context, volumes (configMap, secret,
// hostPath with subPathExpr, emptyDir under a directory standing for the node) and probes. What
// it does not simulate it refuses rather than ignores. The command tests/e2e/cmd/podrun wraps it
// (its comment tells the details); the scenarios of tests/e2e/container call it directly.
package podrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Config is what the pods of a Cluster share.
type Config struct {
	// Network is the user-defined Docker network standing in for the cluster network and DNS.
	Network string
	// Namespace (default "default") and ClusterDomain (default cluster.local) make the pods'
	// DNS names.
	Namespace     string
	ClusterDomain string
	// NodeRoot is the directory standing for the node's filesystem root: a hostPath volume /x is
	// NodeRoot/x.
	NodeRoot string
	// Report receives what podrun does, a line at a time: the docker commands, readiness,
	// liveness failures and restarts, test pods' output.
	Report func(line string)
}

// New is a cluster of the rendered manifests' pods.
func New(config Config, m *Manifests) *Cluster {
	namespace, domain := config.Namespace, config.ClusterDomain
	if namespace == "" {
		namespace = "default"
	}
	if domain == "" {
		domain = "cluster.local"
	}
	return &Cluster{network: config.Network, namespace: namespace, clusterDomain: domain,
		nodeRoot: config.NodeRoot, manifests: m, imageUser: imageUser, report: config.Report,
		started: map[string]*pod{}}
}

// ensureNetwork creates the cluster's Docker network unless it exists.
func (cl *Cluster) ensureNetwork() error {
	if _, err := docker("network", "inspect", cl.network); err != nil {
		if _, err := docker("network", "create", "--label", networkLabel+"="+cl.network, cl.network); err != nil {
			return err
		}
	}
	return nil
}

// Start starts the pods of the named StatefulSets (all when none is named): pods of a Parallel
// StatefulSet all at once, those of an OrderedReady one each after the one before is ready, and
// the StatefulSets' pods in a shuffled order (by seed). It returns once every pod has started,
// or one could not start; the probes of the pods started run until ctx ends (Wait waits for
// them to end).
func (cl *Cluster) Start(ctx context.Context, seed uint64, names ...string) error {
	m, namespace := cl.manifests, cl.namespace
	if len(m.ignored) > 0 {
		cl.say("not pods of a StatefulSet, left out: %s", strings.Join(m.ignored, ", "))
	}
	for _, p := range m.testPods {
		cl.say("test pod %s left out: podrun test runs it", p.Name)
	}
	sets, err := selectStatefulSets(m, names)
	if err != nil {
		return err
	}
	if err := cl.ensureNetwork(); err != nil {
		return err
	}

	// A start unit is the pods started one after another: one pod of a Parallel StatefulSet, or
	// all pods of an OrderedReady one. Units start together, in a shuffled order.
	var units [][]*pod
	for _, set := range sets {
		pods := podsOf(set, namespace)
		if set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement {
			for _, p := range pods {
				units = append(units, []*pod{p})
			}
		} else if len(pods) > 0 {
			units = append(units, pods)
		}
	}
	rand.New(rand.NewPCG(seed, 0)).Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	var order []string
	for _, unit := range units {
		for _, p := range unit {
			order = append(order, p.name)
		}
	}
	cl.say("starting %d pods, in shuffled order (-seed %d): %s", len(order), seed, strings.Join(order, " "))

	errs := make([]error, len(units))
	var starting sync.WaitGroup
	for i, unit := range units {
		starting.Go(func() {
			for j, p := range unit {
				if j > 0 { // OrderedReady: a pod starts once the one before is ready
					select {
					case <-unit[j-1].ready:
					case <-ctx.Done():
						return
					}
				}
				if errs[i] = cl.start(ctx, p); errs[i] != nil {
					return
				}
			}
		})
	}
	starting.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	cl.say("all %d pods started; running their probes until stopped", len(order))
	return nil
}

// Wait waits until the probes of the pods Start started have ended, which they do when the
// context given to Start ends.
func (cl *Cluster) Wait() { cl.probes.Wait() }

// Ready says whether a pod Start started is ready now: its readiness probe succeeded
// (successThreshold times in a row) and has not failed failureThreshold times in a row since.
func (cl *Cluster) Ready(name string) bool {
	p := cl.startedPod(name)
	return p != nil && p.readyNow.Load()
}

// LivenessRestarts is the number of times podrun restarted a pod's container after its liveness
// probe failed.
func (cl *Cluster) LivenessRestarts(name string) int {
	if p := cl.startedPod(name); p != nil {
		return int(p.restarts.Load())
	}
	return 0
}

func (cl *Cluster) startedPod(name string) *pod {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.started[name]
}

func selectStatefulSets(m *Manifests, names []string) ([]*appsv1.StatefulSet, error) {
	var sets []*appsv1.StatefulSet
	for i := range m.statefulSets {
		sets = append(sets, &m.statefulSets[i])
	}
	if len(names) == 0 {
		return sets, nil
	}
	var selected []*appsv1.StatefulSet
	for _, name := range names {
		i := slices.IndexFunc(sets, func(s *appsv1.StatefulSet) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("no StatefulSet %s in the manifests", name)
		}
		selected = append(selected, sets[i])
	}
	return selected, nil
}

// start runs a pod (see create), whose probes then run until ctx ends.
func (cl *Cluster) start(ctx context.Context, p *pod) error {
	if err := cl.create(p); err != nil {
		return err
	}
	cl.mu.Lock()
	cl.started[p.name] = p
	cl.mu.Unlock()
	c := &p.spec.Containers[0]
	if c.ReadinessProbe == nil {
		p.markReady()
		cl.say("%s: ready (no readiness probe)", p.name)
	} else {
		cl.probes.Go(func() { cl.probeLoop(ctx, p, c, readiness, c.ReadinessProbe) })
	}
	if c.LivenessProbe != nil {
		cl.probes.Go(func() { cl.probeLoop(ctx, p, c, liveness, c.LivenessProbe) })
	}
	return nil
}

// create makes a pod's volumes, runs each init container to its end, then starts the app
// container in the background.
func (cl *Cluster) create(p *pod) error {
	volumes, err := cl.prepare(p)
	if err != nil {
		return err
	}
	return cl.run(p, &p.spec.Containers[0], detached, volumes)
}

// prepare makes a pod's volumes and its sandbox, and runs its init containers to their end: what
// happens before its app container starts.
func (cl *Cluster) prepare(p *pod) (map[string]volume, error) {
	if p.spec.HostNetwork || len(p.spec.Containers) != 1 {
		return nil, fmt.Errorf("pod %s: only pods of one container on the pod network are simulated", p.name)
	}
	volumes, err := prepareVolumes(p, cl.manifests, cl.nodeRoot)
	if err != nil {
		return nil, err
	}
	if err := pullImage(p.spec.Containers[0].Image, p.spec.Containers[0].ImagePullPolicy); err != nil {
		return nil, fmt.Errorf("pod %s: %w", p.name, err)
	}
	args := cl.sandboxArgs(p)
	cl.say("%s: docker %s", p.name, shellQuote(args))
	if _, err := docker(args...); err != nil {
		return nil, fmt.Errorf("pod %s, sandbox: %w", p.name, err)
	}
	for i := range p.spec.InitContainers {
		c := &p.spec.InitContainers[i]
		if err := cl.run(p, c, initContainer, volumes); err != nil {
			return nil, err
		}
		if _, err := docker("rm", containerName(p, c, initContainer)); err != nil {
			return nil, err
		}
	}
	return volumes, nil
}

// run runs container c of pod p: an init container to its end, an app container detached.
func (cl *Cluster) run(p *pod, c *corev1.Container, mode runMode, volumes map[string]volume) error {
	if err := pullImage(c.Image, c.ImagePullPolicy); err != nil {
		return fmt.Errorf("pod %s, container %s: %w", p.name, c.Name, err)
	}
	args, err := cl.runArgs(p, c, mode, volumes)
	if err != nil {
		return err
	}
	cl.say("%s: docker %s", p.name, shellQuote(args))
	out, err := docker(args...)
	if err != nil {
		return fmt.Errorf("pod %s, container %s: %w", p.name, c.Name, err)
	}
	if mode == initContainer {
		cl.say("%s: init container %s completed%s", p.name, c.Name, indent(out))
	} else {
		cl.say("%s: started, container %.12s", p.name, out)
	}
	return nil
}

// pullImage does what the pull policy says; there may be no registry, so Never and IfNotPresent
// with a local image are the policies that work without one.
func pullImage(image string, policy corev1.PullPolicy) error {
	_, missing := docker("image", "inspect", image)
	switch {
	case policy == corev1.PullNever && missing != nil:
		return fmt.Errorf("image %s is not present and imagePullPolicy is Never", image)
	case policy == corev1.PullAlways || missing != nil:
		_, err := docker("pull", image)
		return err
	}
	return nil
}

func imageUser(image string) (string, error) {
	out, err := docker("image", "inspect", "--format", "{{.Config.User}}", image)
	return strings.TrimSpace(out), err
}

// Recreate starts the named pods of the StatefulSets again, as the StatefulSet controller
// recreates a pod that is gone (deleted, or its container killed): what is left of its
// containers and sandbox is removed first, then the pod starts from the manifests with the same
// hostname, DNS names and volumes on the same node, so a hostPath volume keeps its contents.
// The probes Start runs go on probing the pod by name.
func (cl *Cluster) Recreate(names ...string) error {
	if len(names) == 0 {
		return errors.New("recreate: name the pods")
	}
	var pods []*pod
	for _, name := range names {
		var found *pod
		for i := range cl.manifests.statefulSets {
			for _, p := range podsOf(&cl.manifests.statefulSets[i], cl.namespace) {
				if p.name == name {
					found = p
				}
			}
		}
		if found == nil {
			return fmt.Errorf("no StatefulSet of the manifests has a pod %s", name)
		}
		pods = append(pods, found)
	}
	if err := cl.ensureNetwork(); err != nil {
		return err
	}
	for _, p := range pods {
		if err := removePod(p); err != nil {
			return err
		}
		if err := cl.create(p); err != nil {
			return err
		}
		cl.say("%s: recreated", p.name)
	}
	return nil
}

// removePod removes what exists of a pod's containers (app, init and sandbox) and their
// anonymous volumes, the app container first.
func removePod(p *pod) error {
	names := []string{p.name}
	for i := range p.spec.InitContainers {
		names = append(names, containerName(p, &p.spec.InitContainers[i], initContainer))
	}
	names = append(names, sandboxName(p))
	for _, name := range names {
		if _, err := docker("container", "inspect", name); err != nil {
			continue
		}
		if _, err := docker("rm", "--force", "--volumes", name); err != nil {
			return err
		}
	}
	return nil
}

// TestResult is how a helm test pod ended: what it printed, and why it failed (nil when it
// succeeded).
type TestResult struct {
	Pod    string
	Output string
	Err    error
}

// Test is `helm test`: it runs each Pod of the manifests annotated helm.sh/hook: test, one after
// another (by helm.sh/hook-weight, then name), once, in the foreground, each to its end or for
// at most timeout, following helm.sh/hook-delete-policy (before-hook-creation, the default,
// removes the pod of an earlier test first). The error says which failed.
func (cl *Cluster) Test(timeout time.Duration) ([]TestResult, error) {
	var pods []*pod
	for i := range cl.manifests.testPods {
		pods = append(pods, podOf(&cl.manifests.testPods[i], cl.namespace))
	}
	if len(pods) == 0 {
		return nil, errors.New("the manifests have no test pod (helm.sh/hook: test)")
	}
	weight := func(p *pod) int {
		w, _ := strconv.Atoi(strings.TrimSpace(p.annotations["helm.sh/hook-weight"]))
		return w
	}
	slices.SortStableFunc(pods, func(a, b *pod) int {
		if d := weight(a) - weight(b); d != 0 {
			return d
		}
		return strings.Compare(a.name, b.name)
	})
	if err := cl.ensureNetwork(); err != nil {
		return nil, err
	}
	var results []TestResult
	var failed []string
	for _, p := range pods {
		var output bytes.Buffer
		err := cl.runTest(p, timeout, &output)
		results = append(results, TestResult{p.name, output.String(), err})
		if err != nil {
			cl.say("%s: failed: %v", p.name, err)
			failed = append(failed, fmt.Sprintf("%s (%v)", p.name, err))
		} else {
			cl.say("%s: succeeded", p.name)
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("test failed: %s", strings.Join(failed, ", "))
	}
	return results, nil
}

// runTest runs one test pod to its end, its output into output; the error says why it failed.
func (cl *Cluster) runTest(p *pod, timeout time.Duration, output *bytes.Buffer) error {
	if p.spec.RestartPolicy != corev1.RestartPolicyNever {
		return fmt.Errorf("a test pod of restartPolicy %q is not simulated (Never is)", p.spec.RestartPolicy)
	}
	policies := strings.Split(p.annotations["helm.sh/hook-delete-policy"], ",")
	for i := range policies {
		policies[i] = strings.TrimSpace(policies[i])
	}
	if p.annotations["helm.sh/hook-delete-policy"] == "" {
		policies = []string{"before-hook-creation"} // helm's default
	}
	// The pod of an earlier test is in the way of its name either way; a pod without
	// before-hook-creation makes helm fail as it exists already.
	_, appExists := docker("container", "inspect", p.name)
	_, sandboxExists := docker("container", "inspect", sandboxName(p))
	if appExists == nil || sandboxExists == nil {
		if !slices.Contains(policies, "before-hook-creation") {
			return errors.New("the pod exists already, and its delete policy is not before-hook-creation")
		}
		if err := removePod(p); err != nil {
			return err
		}
	}
	volumes, err := cl.prepare(p)
	if err != nil {
		return err
	}
	c := &p.spec.Containers[0]
	args, err := cl.runArgs(p, c, foreground, volumes)
	if err != nil {
		return err
	}
	cl.say("%s: docker %s", p.name, shellQuote(args))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.Command("docker", args...)
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		return err
	}
	ended := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_, _ = docker("kill", p.name)
		case <-ended:
		}
	}()
	_ = cmd.Wait() // the container's exit code, or docker's own failure: inspected below
	close(ended)
	cl.say("%s: output:%s", p.name, indent(output.String()))
	state, err := docker("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}", p.name)
	if err != nil {
		return fmt.Errorf("the container did not run: %w", err)
	}
	var status string
	var exitCode int
	var oomKilled bool
	if _, err := fmt.Sscan(state, &status, &exitCode, &oomKilled); err != nil {
		return fmt.Errorf("docker inspect: %q: %w", state, err)
	}
	// The pod has ended: as the kubelet, podrun tears its sandbox down; the container stays,
	// with its exit code and output, until the pod is deleted.
	if _, err := docker("rm", "--force", sandboxName(p)); err != nil {
		return err
	}
	var result error
	switch {
	case ctx.Err() != nil:
		result = fmt.Errorf("did not end within %v", timeout)
	case status != "exited":
		result = fmt.Errorf("the container is %s, not exited", status)
	case oomKilled:
		result = fmt.Errorf("OOM-killed (exit code %d)", exitCode)
	case exitCode != 0:
		result = fmt.Errorf("exit code %d", exitCode)
	}
	if slices.Contains(policies, "hook-succeeded") && result == nil ||
		slices.Contains(policies, "hook-failed") && result != nil {
		if err := removePod(p); err != nil {
			return errors.Join(result, err)
		}
	}
	return result
}

// Down removes the containers podrun started on the network, and the network.
func Down(network string) error {
	out, err := docker("ps", "--all", "--quiet", "--filter", "label="+networkLabel+"="+network)
	if err != nil {
		return err
	}
	if ids := strings.Fields(out); len(ids) > 0 {
		if _, err := docker(append([]string{"rm", "--force", "--volumes"}, ids...)...); err != nil {
			return err
		}
	}
	if _, err := docker("network", "inspect", network); err == nil {
		_, err = docker("network", "rm", network)
		return err
	}
	return nil
}

// docker runs the docker CLI and returns its standard output; the error carries standard error.
func docker(args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("docker", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("docker %s: %w%s", args[0], err, indent(stdout.String()+stderr.String()))
	}
	return stdout.String(), nil
}

// say reports what podrun does, one line at a time.
func (cl *Cluster) say(format string, args ...any) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.report(fmt.Sprintf(format, args...))
}

func indent(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	return "\n    " + strings.ReplaceAll(text, "\n", "\n    ")
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, arg := range args {
		if plainWord.MatchString(arg) {
			quoted[i] = arg
		} else {
			quoted[i] = "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
