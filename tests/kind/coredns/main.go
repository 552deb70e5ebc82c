// CoreDNS for the kind node image, built from its Go module with all its plugins. kubeadm v1.34
// deploys CoreDNS v1.12.1, which the Go module proxy does not serve; v1.14 reads the same
// Corefile kubeadm writes.
package main

import (
	_ "github.com/coredns/coredns/core/plugin"
	"github.com/coredns/coredns/coremain"
)

func main() { coremain.Run() }
