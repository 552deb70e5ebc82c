#!/usr/bin/env bash
# End-to-end test of the chart and the daemon together, without Kubernetes: builds the pstrain
# image, then runs the scenarios of tests/e2e/container (go test), which render the chart from
# values.yml with that image and run every pod of the rendered StatefulSets as a Docker container
# the way a kubelet would (package tests/e2e/podrun), on a Docker network whose DNS answers the
# headless Services' names. The scenarios (see there): "cluster" (all pods together: ready,
# trained to the last step, tail of ps 1's log, one log per pod on the node, limits and security
# context, clean SIGTERM), "workers first", "reinstall", "helm test", "ps killed" and "worker cut
# off". Three of them are written once, in tests/e2e/harness, and run on kind as well
# (ci/kind-e2e.sh).
#
# Needs root, Docker, and Go (at /usr/local/go or on PATH); helm is the one ci/chart-test.sh
# builds. The base image (debian:bookworm-slim) is ci/debian-base.sh's (debootstrap), so no
# registry is needed; apt inside `docker build` needs deb.debian.org.
# Environment: PSTRAIN_E2E_IMAGE (default pstrain:e2e), PSTRAIN_E2E_TIMEOUT (seconds each
# scenario may take, default 600), PSTRAIN_E2E_RUN (only the scenarios go test -run selects, e.g.
# 'TestScenarios/ps_killed'), PSTRAIN_TOOLS_DIR (as for ci/chart-test.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
source ci/go-env.sh

image="${PSTRAIN_E2E_IMAGE:-pstrain:e2e}"
timeout="${PSTRAIN_E2E_TIMEOUT:-600}"
base="$(bash ci/debian-base.sh --name)"

# build_image ARGS...: docker build of the image under test, with ARGS.
build_image() {
  docker build -f docker/Dockerfile --build-arg DATASET=fashion-mnist "$@" .
}
# `ci/e2e.sh prepare`: only the base image and the image's stages that are downloads, so that the
# test later builds no more than the daemon (ci/test.sh runs it while the daemon's tests run).
if [ "${1:-}" = prepare ]; then
  bash ci/debian-base.sh && build_image --quiet --target runtime
  exit
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

source ci/checks.sh
# The e2e's closing lines: its duration, then the count.
finish() {
  echo "e2e took $SECONDS s"
  summary
}

# One run at a time on this Docker Engine: the pods' names and the network are fixed.
exec 9>"${TMPDIR:-/tmp}/pstrain-e2e.lock"
flock 9

# --- tools, base image, image ----------------------------------------------------------------

echo "== tools and image"
if ! command -v go >/dev/null; then
  fail "tools: go not found (install Go at /usr/local/go)"
  finish
fi
helm="${PSTRAIN_TOOLS_DIR:-$(go env GOPATH)/pstrain-chart-tools}/bin/helm"
if [ ! -x "$helm" ]; then
  echo "building helm with ci/chart-test.sh (which also runs the chart checks)"
  bash ci/chart-test.sh >"$work/chart-test.log" 2>&1
fi
export HELM_CONFIG_HOME="$work/helm/config" HELM_CACHE_HOME="$work/helm/cache" \
  HELM_DATA_HOME="$work/helm/data"
testresults="$work/testresults"
if out="$(cd tests/e2e && go vet ./... && go test ./podrun ./harness ./cmd/testresults 2>&1 &&
  go build -o "$testresults" ./cmd/testresults 2>&1)" && [ -x "$helm" ]; then
  pass "tools: $("$helm" version --template '{{.Version}}'), tests/e2e (go vet, go test of podrun, the harness and testresults)"
else
  fail "tools: helm or tests/e2e" "$out$(tail -n 20 "$work/chart-test.log" 2>/dev/null)"
  finish
fi

if out="$(bash ci/debian-base.sh 2>&1)"; then
  pass "$out"
else
  fail "base image $base: ci/debian-base.sh (debootstrap and docker import)" "$out"
  finish
fi

build_start=$SECONDS
if out="$(build_image -t "$image" 2>&1)"; then
  pass "image $image built in $((SECONDS - build_start)) s (Fashion-MNIST): $(docker image ls --format '{{.Size}}' "$image")"
else
  fail "image $image: docker build" "$out"
  finish
fi

# --- the scenarios ----------------------------------------------------------------------------

echo "== scenarios (tests/e2e/container): the chart's pods as Docker containers"
results="$work/go-test.json"
# go test's own record of each test's result (-json), its output shown as -v shows it; the checks
# are the tests without subtests, e.g. "PASS TestScenarios/cluster/trains_to_the_last_step".
checks="$( (cd tests/e2e && PSTRAIN_E2E_IMAGE="$image" PSTRAIN_E2E_HELM="$helm" \
  PSTRAIN_E2E_TIMEOUT="$timeout" go test -count=1 -json -timeout "$((timeout * 6 + 300))s" \
  -run "${PSTRAIN_E2E_RUN:-.}" ./container 2>&1; echo $? >"$work/go-test.rc") |
  tee "$results" | "$testresults")"
rc=$(cat "$work/go-test.rc")
echo "== results"
while read -r result name; do
  name="${name#TestScenarios/}" && name="${name//_/ }" # as the scenarios name their checks
  case "$result" in
    PASS) pass "$name" ;;
    FAIL) fail "$name" ;;
  esac
done <<<"$checks"
if [ "$rc" -ne 0 ] && ! grep -q '^FAIL' <<<"$checks"; then
  fail "go test ./container: exit code $rc" "$("$testresults" <"$results" 2>&1 >/dev/null | tail -n 40)"
fi
finish
