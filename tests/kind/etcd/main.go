// etcd for the kind node image: the etcd server of the version kubeadm v1.34 deploys (3.6.5),
// built from its Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
