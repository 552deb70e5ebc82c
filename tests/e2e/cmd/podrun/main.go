// Command podrun runs the pods of a rendered chart's StatefulSets as Docker containers, the way a
// kubelet would run them, for an end-to-end test on a machine without Kubernetes.
//
//	helm template … | podrun up -network NAME -node-root DIR [STATEFULSET…]
//	helm template … | podrun recreate -network NAME -node-root DIR POD…
//	helm template … | podrun test -network NAME -node-root DIR [-timeout DURATION]
//	podrun down -network NAME
//
// up starts every pod of the named StatefulSets (all when none is named): pods of a Parallel
// StatefulSet all at once, those of an OrderedReady one each after the one before is ready, and
// the StatefulSets' pods in a shuffled order. Each pod is one container named after the pod, in
// the network namespace of the pod's sandbox container <pod>-sandbox (the kubelet's pause
// container) on the user-defined Docker network NAME. The sandbox holds the pod's address,
// hostname and resolv.conf, and the names a headless Service gives the pod (<pod>.<service> and
// <pod>.<service>.<namespace>.svc.<cluster domain>) in the network's embedded DNS. Init
// containers run to their end first, in the same sandbox. Volumes live under DIR, which stands
// for the node's filesystem: a hostPath volume /x is DIR/x. Once every pod has started ("all N pods started"),
// up runs their liveness and readiness probes, reporting "<pod>: ready" and any liveness
// failure and restart, until SIGTERM or SIGINT. What podrun does not simulate (other volume
// types, envFrom, startup probes, pods of several containers …) it refuses rather than ignores.
//
// recreate does what the StatefulSet controller does when a pod is gone (deleted, or its
// container killed): it removes what is left of each named pod's containers and sandbox and
// starts the pod again from the manifests, with the same hostname, DNS names and volumes on the
// same node (DIR), so a hostPath volume keeps its contents. The up that started the pods goes on
// probing them by name.
//
// test is `helm test`: it runs each Pod of the manifests annotated helm.sh/hook: test, one after
// another (by helm.sh/hook-weight, then name), once, in the foreground, on the network and with
// the same kubelet-like translation as the StatefulSets' pods; prints each one's output, as
// `helm test --logs` does, and "<pod>: succeeded" or "<pod>: failed …"; and exits 1 when one
// failed or did not end within -timeout. helm.sh/hook-delete-policy is followed
// (before-hook-creation, the default, removes the pod of an earlier test first).
//
// To cut a pod off the network, disconnect its sandbox: docker network disconnect NAME <pod>-sandbox.
//
// down removes the containers podrun started on NAME, and the network.
//
// The end-to-end tests (tests/e2e/container) use package podrun, which this command wraps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"pstrain/tests/e2e/podrun"
)

func main() {
	if len(os.Args) < 2 {
		fatal(errors.New("usage: podrun up|recreate|test|down [flags]; podrun up -h lists the flags"))
	}
	command := os.Args[1]
	flags := flag.NewFlagSet("podrun "+command, flag.ExitOnError)
	network := flags.String("network", "pstrain-e2e", "the Docker network the pods run on")
	if command == "down" {
		_ = flags.Parse(os.Args[2:])
		if err := podrun.Down(*network); err != nil {
			fatal(err)
		}
		return
	}
	namespace := flags.String("namespace", "default", "the pods' namespace")
	clusterDomain := flags.String("cluster-domain", "cluster.local", "the cluster's DNS domain")
	nodeRoot := flags.String("node-root", "", "the directory standing for the node's filesystem root (required)")
	seed := flags.Uint64("seed", uint64(time.Now().UnixNano()), "up: seed of the shuffled start order")
	timeout := flags.Duration("timeout", 5*time.Minute, "test: how long each test pod may run (helm test --timeout)")
	if !slices.Contains([]string{"up", "recreate", "test"}, command) {
		fatal(fmt.Errorf("unknown command %q: up, recreate, test or down", command))
	}
	_ = flags.Parse(os.Args[2:])
	if *nodeRoot == "" {
		fatal(fmt.Errorf("podrun %s: -node-root is required", command))
	}
	m, err := podrun.ReadManifests(os.Stdin)
	if err != nil {
		fatal(err)
	}
	cl := podrun.New(podrun.Config{Network: *network, Namespace: *namespace, ClusterDomain: *clusterDomain,
		NodeRoot: *nodeRoot, Report: func(line string) { fmt.Println(line) }}, m)
	switch command {
	case "up":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err = cl.Start(ctx, *seed, flags.Args()...); err == nil {
			<-ctx.Done()
		}
		stop()
		cl.Wait()
	case "recreate":
		err = cl.Recreate(flags.Args()...)
	case "test":
		_, err = cl.Test(*timeout)
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "podrun:", err)
	os.Exit(1)
}
