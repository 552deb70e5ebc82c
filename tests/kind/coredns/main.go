// CoreDNS for the kind node image, built from its Go module with the plugins of the Corefile
// kubeadm writes (errors, health, ready, kubernetes, prometheus, forward, cache, loop, reload,
// loadbalance) and no others: the full set links every cloud provider's SDK and takes several
// times as long to build. kubeadm v1.34 deploys CoreDNS v1.12.1, which the Go module proxy does
// not serve; v1.12.2 reads the same Corefile, and builds on the client libraries of tests/go.work.
package main

import (
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"

	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
