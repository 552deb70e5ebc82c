#!/usr/bin/env bash
# End-to-end test on Kubernetes: the README's "Run on Kubernetes" commands against a real kind
# cluster of the repository's kind-config.yml, with nothing pulled from a registry.
#
# tests/kind/build.sh builds kind, kubectl and kind's node image (Kubernetes, etcd, CoreDNS,
# pause from Go modules; systemd, containerd, runc, CNI plugins from Debian), cached by a content
# key: the first run takes about 18 minutes on 2 cores, later ones reuse it. The cluster then
# starts with `kind create cluster --config kind-config.yml --image <node image>`, where the
# configuration is the repository's own with three changes for this test:
#   - networking.kubeProxyMode: nftables. kube-proxy's image here is Debian's, with nft; in the
#     default iptables mode it would have to match the iptables variant the node chose.
#   - each worker node's /tmp/mnist is a directory of this run instead of the host's /tmp/mnist,
#     so that no earlier run's logs or checkpoints are found, and none are left behind.
#   - a fourth worker node, the spare, labelled and then tainted (NoSchedule) pstrain-e2e/spare:
#     the lost-node scenario stops it (docker stop) and deletes it; only its release's pods
#     tolerate the taint, so no other scenario's pods are on it, and the others have the three
#     nodes of kind-config.yml as a user has (that scenario runs alone, before the others).
# and KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER=overlayfs in kind's environment: on Docker's
# fuse-overlayfs storage driver, kind's node would choose containerd's fuse-overlayfs
# snapshotter, which Debian does not package; the node's /var, where containerd keeps its
# snapshots, is a Docker volume, on which overlayfs works. (kind hands this variable of its own
# environment to the node, over any the node image sets.)
# Where `docker run --privileged` fails (a capability bounding set without CAP_SYS_RESOURCE, as
# on some VMs), kind's nodes run with tests/kind/runc-wrapper: it is registered as a Docker
# runtime in /etc/docker/daemon.json for the time of the test (tests/kind/docker-runtime.sh) and
# given to kind's `docker run` only, by a `docker` in front of Docker's on kind's PATH.
#
# The Go tests in tests/e2e/kind then drive the cluster (see there), in parallel, each in a
# namespace of its own (values.yml's CPU limits leave most of the machine idle while one release
# trains; together they take about 5 minutes on 2 cores): kind load docker-image,
# helm install/test/upgrade/uninstall, helm template with kubectl apply (GitOps),
# kubectl exec/delete/label/scale, Pod Security admission. At the end the cluster, its Docker
# network and any daemon.json change are removed, also on failure or interrupt.
#
# Needs root, Docker and Go; installs debootstrap and jq. helm is ci/chart-test.sh's. The image
# under test is PSTRAIN_KIND_IMAGE (default pstrain:e2e, which ci/image.sh builds), which must be
# on this machine's Docker, and the history checker PSTRAIN_HISTORY_CHECK (default ci/build.sh's
# build/daemon/tests/history_check) must be built. PSTRAIN_KIND_TIMEOUT: go test's time limit (default 40m);
# PSTRAIN_KIND_RUN: only the scenarios go test -run selects (e.g. TestReadme).
set -uo pipefail
cd "$(dirname "$0")/.."
source ci/go-env.sh

image="${PSTRAIN_KIND_IMAGE:-pstrain:e2e}"
# The history checker the scenarios run on their pods' logs, from ci/build.sh's build.
history_check="${PSTRAIN_HISTORY_CHECK:-$PWD/build/daemon/tests/history_check}"
name=pstrain-kind # the cluster, and its Docker network
work="$(mktemp -d)"
runtime_added=""
source ci/checks.sh

finish() {
  echo "kind e2e took $SECONDS s"
  summary
}
cleanup() {
  if [ -x "$work/bin/kind" ]; then
    "$work/bin/kind" delete cluster --name "$name" --kubeconfig "$work/kubeconfig" >/dev/null 2>&1
  fi
  docker network rm "$name" >/dev/null 2>&1
  [ -n "$runtime_added" ] && bash tests/kind/docker-runtime.sh remove
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One run at a time on this Docker Engine: the cluster's name and the runtime are fixed.
exec 9>"${TMPDIR:-/tmp}/pstrain-kind-e2e.lock"
flock 9

# --- tools and images --------------------------------------------------------------------------

echo "== tools and images"
helm="${PSTRAIN_TOOLS_DIR:-$(go env GOPATH)/pstrain-chart-tools}/bin/helm"
[ -x "$helm" ] || bash ci/chart-test.sh tools >"$work/chart-test.log" 2>&1
if ! out="$(bash ci/install-deps.sh debootstrap jq 2>&1)" || [ ! -x "$helm" ]; then
  fail "tools: debootstrap, jq (apt) and helm (ci/chart-test.sh)" "$out$(tail -n 20 "$work/chart-test.log" 2>/dev/null)"
  finish
fi

if out="$(cd tests/e2e && go vet ./... 2>&1 && go test -count=1 ./harness 2>&1)"; then
  pass "tests/e2e: go vet, and go test of the harness (how the scenarios read events)"
else
  fail "tests/e2e: go vet or go test ./harness" "$out"
  finish
fi

start=$SECONDS
if bash tests/kind/build.sh >"$work/build.log" 2>&1; then
  node_image="$(tail -n 1 "$work/build.log")"
  pass "node image $node_image, kind and kubectl ($((SECONDS - start)) s):"
  grep -E '^built|are built' "$work/build.log" | sed 's/^/    /'
else
  fail "tests/kind/build.sh" "$(cat "$work/build.log")"
  finish
fi
tools_bin="${PSTRAIN_KIND_TOOLS_DIR:-$(go env GOPATH)/pstrain-kind-tools}/bin"
mkdir -p "$work/bin"
ln -s "$tools_bin/kind" "$tools_bin/kubectl" "$helm" "$work/bin/"

if docker image inspect "$image" >/dev/null 2>&1; then
  pass "image under test $image is on this machine ($(docker image ls --format '{{.Size}}' "$image"))"
else
  fail "image under test $image: not on this machine's Docker (ci/image.sh builds it)"
  finish
fi

# --- the host: --privileged ----------------------------------------------------------------------

if docker run --rm --privileged --network none --entrypoint true "$node_image" 2>"$work/privileged.log"; then
  pass "docker run --privileged works here: Docker is left as it is"
else
  echo "docker run --privileged fails here: $(grep -m 1 -o 'unable to apply caps[^:]*: [^:]*' "$work/privileged.log" ||
    head -n 1 "$work/privileged.log")"
  runtime_added=yes
  if out="$(bash tests/kind/docker-runtime.sh add "$tools_bin/runc-wrapper" 2>&1)" &&
    docker run --rm --privileged --network none --runtime pstrain-kind-runc --entrypoint true "$node_image" 2>&1; then
    pass "kind's nodes run with Docker runtime pstrain-kind-runc (runc without CAP_SYS_RESOURCE), until the end:"
    sed 's/^/    /' <<<"$out"
    # kind runs `docker run`: it gets the runtime from this docker, first on kind's PATH.
    printf '#!/bin/sh\n[ "$1" = run ] && shift && exec %s run --runtime pstrain-kind-runc "$@"\nexec %s "$@"\n' \
      "$(command -v docker)" "$(command -v docker)" >"$work/bin/docker"
    chmod +x "$work/bin/docker"
  else
    fail "a Docker runtime for --privileged" "$out"
    finish
  fi
fi

# --- the cluster ------------------------------------------------------------------------------

echo "== kind create cluster"
logs="$work/mnist"
mkdir -p "$logs"
config="$work/kind-config.yml"
spare=pstrain-e2e/spare # tests/e2e/cluster's SpareLabel
{
  sed "s#hostPath: /tmp/mnist\$#hostPath: $logs#" kind-config.yml
  printf '  - role: worker\n    labels:\n      %s: "true"\n    extraMounts:\n      - hostPath: %s\n        containerPath: /tmp/mnist\n' \
    "$spare" "$logs"
  printf 'networking:\n  kubeProxyMode: nftables\n'
} >"$config"
changed="$(diff kind-config.yml "$config" | grep -c '^>')"
if [ "$changed" != 11 ] || [ "$(tail -n 1 kind-config.yml)" != "        containerPath: /tmp/mnist" ]; then
  fail "kind-config.yml: expected 3 hostPaths /tmp/mnist, the list of nodes last" "$(diff kind-config.yml "$config")"
  finish
fi
# What a run that was killed left behind.
"$work/bin/kind" delete cluster --name "$name" --kubeconfig "$work/kubeconfig" >/dev/null 2>&1
start=$SECONDS
if PATH="$work/bin:$PATH" KIND_EXPERIMENTAL_DOCKER_NETWORK="$name" KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER=overlayfs \
  kind create cluster --name "$name" --config "$config" --image "$node_image" \
  --kubeconfig "$work/kubeconfig" --wait 5m >"$work/create.log" 2>&1; then
  pass "kind create cluster --config kind-config.yml --image $node_image: $((SECONDS - start)) s"
  "$work/bin/kubectl" --kubeconfig "$work/kubeconfig" taint nodes --selector "$spare" "$spare=true:NoSchedule" >/dev/null ||
    fail "kubectl taint nodes --selector $spare"
  "$work/bin/kubectl" --kubeconfig "$work/kubeconfig" get nodes | sed 's/^/    /'
else
  fail "kind create cluster" "$(cat "$work/create.log")"
  finish
fi

# --- the scenarios ------------------------------------------------------------------------------

echo "== scenarios (tests/e2e/kind, in parallel)"
# Every parallel scenario at once: their runs are paced by their pods' CPU limits (or slower on a
# busy host), so one that waited for a slot added its whole length at the end (8 at a time, the
# last three started 2.5 to 3 minutes in, and two of them ended 1.5 minutes after the others).
(
  cd tests/e2e &&
    PSTRAIN_KIND_CLUSTER="$name" PSTRAIN_KIND_KUBECONFIG="$work/kubeconfig" PSTRAIN_KIND_BIN="$work/bin" \
      PSTRAIN_KIND_IMAGE="$image" PSTRAIN_KIND_LOG_DIR="$logs" \
      PSTRAIN_HISTORY_CHECK="$history_check" \
      go test -count=1 -json -parallel 16 -timeout "${PSTRAIN_KIND_TIMEOUT:-40m}" -run "${PSTRAIN_KIND_RUN:-.}" ./kind/
) >"$work/scenarios.json" 2>"$work/scenarios.err"
rc=$?
# go test's events of the scenarios (parallel ones interleave in its plain output).
events() { jq -rR "fromjson? | $1" "$work/scenarios.json"; }
# One line per scenario, with what the scenario logged (what the user saw) or, when it failed,
# all its output: the failed ones last, where a log cut short still shows them.
while IFS=$'\t' read -r result scenario took; do
  output="$(events "select(.Test == \"$scenario\" and .Action == \"output\") | .Output | rtrimstr(\"\\n\")" | grep -v -E '^(=== |--- )')"
  case "$result" in
    pass)
      pass "$scenario ($took s)"
      grep -E '^    \S+_test.go:[0-9]+: ' <<<"$output" | cut -c 5-164 | sed 's/^/    /'
      ;;
    skip) echo "SKIP $scenario: $(grep -oE '_test.go:[0-9]+: .*' <<<"$output" | cut -d' ' -f2-)" ;;
    *) fail "$scenario ($took s)" "$output" ;;
  esac
done < <(events 'select(.Test != null and (.Action == "pass" or .Action == "fail" or .Action == "skip")) | [.Action, .Test, .Elapsed] | @tsv' |
  sort -s -t $'\t' -k 1,1r)
if [ $rc -ne 0 ] && [ -z "$(events 'select(.Test != null and .Action == "fail") | .Test')" ]; then
  fail "go test ./kind/ (exit code $rc)" "$(events 'select(.Test == null and .Action == "output") | .Output | rtrimstr("\n")' | tail -n 40; tail -n 40 "$work/scenarios.err")"
fi
finish
