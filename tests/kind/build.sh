#!/usr/bin/env bash
# Builds what a kind cluster needs, with no image pulled from a registry: kind and kubectl for
# this machine, and kind's node image with the control-plane images in its containerd store.
# Everything comes from the Go modules in this directory and Debian packages:
#   kubernetes/  kube-apiserver, -controller-manager, -scheduler, kubelet, kube-proxy, kubeadm,
#                kubectl of k8s.io/kubernetes (its version is the cluster's)
#   etcd/, coredns/, pause/   the other images kubeadm deploys
#   kind/        kind, and the files of kind's own node image (images/base/files in its module)
#   runc-wrapper/             the runtime ci/kind-e2e.sh gives kind's nodes where --privileged fails
#   node/        the node image's Dockerfile and its pod network (node-cni.sh)
# The node and kube-proxy images are built on debian:bookworm-slim (made by ci/debian-base.sh with
# debootstrap when missing), with Debian's systemd, containerd, runc and CNI plugins.
#
# Cached by a content key of this directory, the Go version and settings, and the build list of
# tests/go.work: the node image is pstrain-kind-node:<key>, the host tools are in
# $PSTRAIN_KIND_TOOLS_DIR/bin (default $(go env GOPATH)/pstrain-kind-tools); a run with the same
# key builds nothing. Older node images of this script are removed. The last line of the output
# is the node image's name.
#
# Needs root, Docker, Go, debootstrap and jq; Debian's archive (deb.debian.org) and the Go module
# proxy.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../ci/go-env.sh"

# The key covers the build list too: tests/go.work gives these modules the versions of the others'.
key="$(cd "$here" && { find . -type f | LC_ALL=C sort | xargs sha256sum; go version; go env CGO_ENABLED GOFLAGS
  (cd kubernetes && go list -m all); } | sha256sum | cut -c 1-12)"
tools="${PSTRAIN_KIND_TOOLS_DIR:-$(go env GOPATH)/pstrain-kind-tools}"
bin="$tools/bin"
node_repository=pstrain-kind-node
node_image="$node_repository:$key"

# One build at a time (ci/test.sh starts one ahead, in the background): a second waits, then
# finds it built.
mkdir -p "$tools"
exec 9>"$tools/build.lock"
flock 9
if [ "$(cat "$tools/stamp" 2>/dev/null)" = "$key" ] && docker image inspect "$node_image" >/dev/null 2>&1; then
  echo "node image and tools of key $key are built"
  echo "$node_image"
  exit 0
fi

work="$(mktemp -d)"
debian="$(bash "$here/../../ci/debian-base.sh" --name)"
build_container="pstrain-kind-build-$key"
cleanup() {
  docker rm -f "$build_container" >/dev/null 2>&1
  docker rmi "pstrain-kind-build:$key" $(docker image ls --quiet --filter "reference=pstrain-kind-build/*:$key") \
    >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# quietly CMD...: runs CMD; shows its output only if it fails (docker build's is mostly noise).
quietly() {
  local out
  out="$("$@" 2>&1)" || { echo "$out"; return 1; }
}
# step NAME CMD...: runs CMD, then prints how long it took.
step() {
  local name="$1" start=$SECONDS
  shift
  "$@"
  echo "built $name in $((SECONDS - start)) s"
}

# --- Debian, in the background while Go builds -----------------------------------------------

step "Debian bookworm (ci/debian-base.sh)" bash "$here/../../ci/debian-base.sh" >"$work/debian.out" 2>&1 &
debian_pid=$!

# --- binaries ----------------------------------------------------------------------------------

mkdir -p "$bin"
rm -f "$tools/stamp"
# go_build MODULE PACKAGES...: the module's main packages into $bin, stripped (ci/go-env.sh: static).
go_build() {
  local module="$1"
  shift
  (cd "$here/$module" && go build -ldflags "-s -w $ldflags" -o "$bin/" "$@")
}
kubernetes_version="$(cd "$here/kubernetes" && go list -m -f '{{.Version}}' k8s.io/kubernetes)"
# The version the components report (and kubeadm checks), as Kubernetes' own release build sets it.
minor="$(cut -d. -f2 <<<"$kubernetes_version")"
ldflags=""
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $package.gitVersion=$kubernetes_version -X $package.gitMajor=1 -X $package.gitMinor=$minor"
  ldflags+=" -X $package.gitTreeState=clean"
done
step "Kubernetes $kubernetes_version" go_build kubernetes $(tools_of "$here/kubernetes")
ldflags=""
step etcd go_build etcd .
step CoreDNS go_build coredns .
step pause go_build pause .
step kind go_build kind $(tools_of "$here/kind")
step runc-wrapper go_build runc-wrapper .
kind_files="$(cd "$here/kind" && go list -m -f '{{.Dir}}' sigs.k8s.io/kind)/images/base/files"

wait "$debian_pid" || { cat "$work/debian.out"; exit 1; }
cat "$work/debian.out"

# --- control-plane images --------------------------------------------------------------------

# The images kubeadm deploys, by the names it gives them; each is built under a name of this
# script (no registry's name on this machine's Docker) and renamed in the node's store.
images=()  # "<build name> <kubeadm's name>"
# image BINARY DOCKERFILE: builds the image of BINARY from DOCKERFILE, with the binary in its context.
image() {
  local binary="$1" context="$work/image-$1" name
  name="$("$bin/kubeadm" config images list --kubernetes-version "$kubernetes_version" | grep -E "/$binary:")"
  mkdir -p "$context"
  cp "$bin/$binary" "$context/"
  printf '%s\n' "$2" >"$context/Dockerfile"
  quietly docker build --build-arg "DEBIAN=$debian" -t "pstrain-kind-build/$binary:$key" "$context"
  images+=("pstrain-kind-build/$binary:$key $name")
}
static_image() {
  image "$1" "FROM scratch
ENV PATH=/usr/local/bin:/usr/bin:/bin
COPY $1 /usr/local/bin/$1"
}
make_images() {
  static_image kube-apiserver
  static_image kube-controller-manager
  static_image kube-scheduler
  static_image etcd
  # kube-proxy, in nftables mode (ci/kind-e2e.sh's cluster configuration), runs nft.
  image kube-proxy 'ARG DEBIAN
FROM $DEBIAN
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nftables iptables conntrack && rm -rf /var/lib/apt/lists/*
COPY kube-proxy /usr/local/bin/kube-proxy'
  image coredns 'FROM scratch
COPY coredns /coredns
ENTRYPOINT ["/coredns"]'
  image pause 'FROM scratch
COPY pause /pause
ENTRYPOINT ["/pause"]'
  local entry built=()
  for entry in "${images[@]}"; do built+=("${entry%% *}"); done
  docker save -o "$work/images.tar" "${built[@]}"
}
step "control-plane images" make_images

# --- node image --------------------------------------------------------------------------------

make_node() {
  local context="$work/node"
  mkdir -p "$context/bin"
  cp -r "$kind_files" "$context/kind-files"
  chmod -R u+w,go-w,a+rX "$context/kind-files"
  chmod 0755 "$context"/kind-files/usr/local/bin/* "$context"/kind-files/kind/bin/*
  cp -r "$here/node/files" "$here/node/Dockerfile" "$context/"
  cp "$bin/kubeadm" "$bin/kubelet" "$bin/kubectl" "$context/bin/"
  echo -n "$kubernetes_version" >"$context/version"
  quietly docker build --build-arg "DEBIAN=$debian" -t "pstrain-kind-build:$key" "$context"
  # The images go into the node's containerd store as kind's own node images hold them: pinned,
  # so the kubelet never removes them, and unpacked by each node when first used.
  docker run --detach --name "$build_container" --tmpfs /run --tmpfs /tmp --volume "$work/images.tar:/images.tar:ro" \
    --entrypoint sleep "pstrain-kind-build:$key" infinity >/dev/null
  local script='containerd >/tmp/containerd.log 2>&1 & pid=$!
for i in $(seq 100); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done
ctr -n k8s.io images import --no-unpack --all-platforms /images.tar >/dev/null
while read -r built name; do
  ctr -n k8s.io images tag "docker.io/$built" "$name" >/dev/null
  ctr -n k8s.io images rm "docker.io/$built" >/dev/null
  ctr -n k8s.io images label "$name" io.cri-containerd.pinned=pinned >/dev/null
done
ctr -n k8s.io images list --quiet
kill $pid && wait $pid'
  local entry
  printf '%s\n' "${images[@]}" | docker exec -i "$build_container" bash -euc "$script" >"$work/store.out" 2>&1 ||
    { cat "$work/store.out"; docker exec "$build_container" tail -n 20 /tmp/containerd.log; return 1; }
  for entry in "${images[@]}"; do
    grep -qxF "${entry#* }" "$work/store.out" || { echo "not in the node's store: ${entry#* }"; cat "$work/store.out"; return 1; }
  done
  docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' \
    "$build_container" "$node_image" >/dev/null
}
step "node image $node_image" make_node

for old in $(docker image ls --format '{{.Repository}}:{{.Tag}}' "$node_repository"); do
  [ "$old" = "$node_image" ] || docker rmi "$old" >/dev/null
done
echo "$key" >"$tools/stamp"
echo "$node_image"
