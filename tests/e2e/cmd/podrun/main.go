// Command podrun runs the pods of a rendered chart's StatefulSets as Docker containers, the way a
// kubelet would run them, for an end-to-end test on a machine without Kubernetes.
//
//	helm template … | podrun up -network NAME -node-root DIR [STATEFULSET…]
//	podrun down -network NAME
//
// up starts every pod of the named StatefulSets (all when none is named): pods of a Parallel
// StatefulSet all at once, those of an OrderedReady one each after the one before is ready, and
// the StatefulSets' pods in a shuffled order. Each pod is one container named after the pod, on
// the user-defined Docker network NAME, whose embedded DNS answers the names a headless Service
// gives the pod (<pod>.<service> and <pod>.<service>.<namespace>.svc.<cluster domain>). Init
// containers run to their end first. Volumes live under DIR, which stands for the node's
// filesystem: a hostPath volume /x is DIR/x. Once every pod has started ("all N pods started"),
// up runs their liveness and readiness probes, reporting "<pod>: ready" and any liveness
// failure and restart, until SIGTERM or SIGINT. What podrun does not simulate (other volume
// types, envFrom, startup probes, pods of several containers …) it refuses rather than ignores.
//
// down removes the containers up started on NAME, and the network.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func main() {
	if len(os.Args) < 2 {
		fatal(errors.New("usage: podrun up|down [flags]; podrun up -h lists the flags"))
	}
	flags := flag.NewFlagSet("podrun "+os.Args[1], flag.ExitOnError)
	network := flags.String("network", "pstrain-e2e", "the Docker network the pods run on")
	var err error
	switch os.Args[1] {
	case "up":
		namespace := flags.String("namespace", "default", "the pods' namespace")
		clusterDomain := flags.String("cluster-domain", "cluster.local", "the cluster's DNS domain")
		nodeRoot := flags.String("node-root", "", "the directory standing for the node's filesystem root (required)")
		seed := flags.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the shuffled start order")
		_ = flags.Parse(os.Args[2:])
		if *nodeRoot == "" {
			fatal(errors.New("podrun up: -node-root is required"))
		}
		err = up(*network, *namespace, *clusterDomain, *nodeRoot, *seed, flags.Args())
	case "down":
		_ = flags.Parse(os.Args[2:])
		err = down(*network)
	default:
		err = fmt.Errorf("unknown command %q: up or down", os.Args[1])
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "podrun:", err)
	os.Exit(1)
}

// up starts the pods of the named StatefulSets (all when none is named) of the manifests on
// standard input.
func up(network, namespace, clusterDomain, nodeRoot string, seed uint64, names []string) error {
	m, err := readManifests(os.Stdin)
	if err != nil {
		return err
	}
	if len(m.ignored) > 0 {
		say("not pods of a StatefulSet, left out: %s", strings.Join(m.ignored, ", "))
	}
	sets, err := selectStatefulSets(m, names)
	if err != nil {
		return err
	}
	cl := &cluster{network, namespace, clusterDomain, nodeRoot, m, imageUser}
	if _, err := docker("network", "inspect", network); err != nil {
		if _, err := docker("network", "create", "--label", networkLabel+"="+network, network); err != nil {
			return err
		}
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
	say("starting %d pods, in shuffled order (-seed %d): %s", len(order), seed, strings.Join(order, " "))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var probes sync.WaitGroup
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
				if errs[i] = cl.start(ctx, p, &probes); errs[i] != nil {
					return
				}
			}
		})
	}
	starting.Wait()
	if err := errors.Join(errs...); err != nil {
		stop()
		probes.Wait()
		return err
	}
	say("all %d pods started; running their probes until stopped", len(order))
	<-ctx.Done()
	probes.Wait()
	return nil
}

func selectStatefulSets(m *manifests, names []string) ([]*appsv1.StatefulSet, error) {
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

// start runs a pod: its volumes, then each init container to its end, then its app container,
// whose probes then run until ctx ends.
func (cl *cluster) start(ctx context.Context, p *pod, probes *sync.WaitGroup) error {
	if p.spec.HostNetwork || len(p.spec.Containers) != 1 {
		return fmt.Errorf("pod %s: only pods of one container on the pod network are simulated", p.name)
	}
	volumes, err := prepareVolumes(p, cl.manifests, cl.nodeRoot)
	if err != nil {
		return err
	}
	for i := range p.spec.InitContainers {
		c := &p.spec.InitContainers[i]
		if err := cl.run(p, c, true, volumes); err != nil {
			return err
		}
		if _, err := docker("rm", containerName(p, c, true)); err != nil {
			return err
		}
	}
	c := &p.spec.Containers[0]
	if err := cl.run(p, c, false, volumes); err != nil {
		return err
	}
	if c.ReadinessProbe == nil {
		p.markReady()
		say("%s: ready (no readiness probe)", p.name)
	} else {
		probes.Go(func() { cl.probeLoop(ctx, p, c, readiness, c.ReadinessProbe) })
	}
	if c.LivenessProbe != nil {
		probes.Go(func() { cl.probeLoop(ctx, p, c, liveness, c.LivenessProbe) })
	}
	return nil
}

func (cl *cluster) run(p *pod, c *corev1.Container, init bool, volumes map[string]volume) error {
	if err := pullImage(c.Image, c.ImagePullPolicy); err != nil {
		return fmt.Errorf("pod %s, container %s: %w", p.name, c.Name, err)
	}
	args, err := cl.runArgs(p, c, init, volumes)
	if err != nil {
		return err
	}
	say("%s: docker %s", p.name, shellQuote(args))
	out, err := docker(args...)
	if err != nil {
		return fmt.Errorf("pod %s, container %s: %w", p.name, c.Name, err)
	}
	if init {
		say("%s: init container %s completed%s", p.name, c.Name, indent(out))
	} else {
		say("%s: started, container %.12s", p.name, out)
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

// down removes the containers up started on the network, and the network.
func down(network string) error {
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

var output sync.Mutex

func say(format string, args ...any) {
	output.Lock()
	defer output.Unlock()
	fmt.Printf(format+"\n", args...)
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
