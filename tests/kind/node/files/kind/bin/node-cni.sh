#!/bin/bash
# The node's pod network, in place of kind's kindnetd (which the Go module proxy does not serve):
# a bridge with the node's own pod subnet 10.244.N.0/24, N being the last byte of the node's
# address, routes to the other nodes' pod subnets through their addresses, and masquerading only
# of pod traffic that leaves the pod network (pods see each other's real addresses).
set -euo pipefail
address="$(ip -4 -o addr show dev eth0 | awk '{ print $4 }' | cut -d/ -f1 | head -n 1)"
n="${address##*.}"
net="${address%.*}"
mkdir -p /etc/cni/net.d
cat >/etc/cni/net.d/10-node-bridge.conflist <<CONF
{
  "cniVersion": "0.4.0",
  "name": "node-bridge",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.$n.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CONF
# A cluster's nodes have the first addresses of its Docker network.
for m in $(seq 2 30); do
  [ "$m" = "$n" ] || ip route replace "10.244.$m.0/24" via "$net.$m" dev eth0
done
iptables -t nat -C POSTROUTING -s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE 2>/dev/null ||
  iptables -t nat -A POSTROUTING -s 10.244.0.0/16 ! -d 10.244.0.0/16 -j MASQUERADE
