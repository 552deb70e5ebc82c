#!/usr/bin/env bash
# The test command: installs what it needs, builds, runs the daemon's unit and integration tests
# (ctest), the page in headless chromium (ci/ui-test.sh), the unit suites under ASan/UBSan and
# the ps core under TSan (ci/sanitize.sh), a minute of fuzzing of the frame decoder, the chart
# checks, the chart's Grafana dashboard against a run (tests/dashboard/check.sh), the pstrain
# image (ci/image.sh) and the README's Kubernetes commands with it on a kind cluster built here
# from Go modules and Debian packages (ci/kind-e2e.sh), with the ASan suites beside it. Exits
# non-zero if any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh --tests
# Downloads, while the daemon builds and its tests run: the base image of the pstrain and kind
# node images (debootstrap) and the pstrain image's packages (ci/image.sh prepare), and the Go
# modules every Go tool and test of the repository builds from. Whoever needs them later waits
# for them (ci/debian-base.sh's lock, Go's module cache, Docker's build cache) or fetches what a
# failed download left missing, and says why.
source ci/go-env.sh
nice -n 19 bash ci/image.sh prepare >/dev/null 2>&1 &
downloads=($!)
(cd tests && nice -n 19 go mod download >/dev/null 2>&1) &  # the modules of tests/go.work
downloads+=($!)
(cd tests/chart/helm-docs && GOWORK=off nice -n 19 go mod download >/dev/null 2>&1) &  # helm-docs
downloads+=($!)
bash ci/build.sh
echo "packages and build: $SECONDS s"
# What the later phases compile (the fuzzing build, the chart test tools, kind and its node image,
# the sanitizer builds) is compiled from here on in the background, on the CPU time the phases
# before them leave idle (SCHED_IDLE): their tests wait on processes, sockets and a browser much of
# the time. In the order the phases need them: the sanitizer suites run beside and after the kind
# scenarios. Each of those scripts holds a lock while it builds, so the phase that needs a build
# waits for it, then finds it done; what failed here is built again, with its error, by its phase.
setsid chrt --idle 0 bash -c 'bash ci/fuzz.sh build; bash ci/chart-test.sh tools;
  bash tests/kind/build.sh; bash ci/sanitize.sh build' >build/ahead.log 2>&1 &
ahead=$!
# A trap's failing last command would become the script's exit status: `|| true`.
trap 'kill -- -$ahead 2>/dev/null || true' EXIT

# Every phase runs, whatever failed before it, and prints its time; the last line names those
# that failed.
failed=()
phase() {
  local name=$1 start=$SECONDS
  shift
  "$@" || failed+=("$name")
  echo "phase $name: $((SECONDS - start)) s (at $((SECONDS / 60)) min $((SECONDS % 60)) s of the test command)"
}
# beside NAME CMD...: runs CMD in the background, its output in build/NAME.log; `report NAME`
# waits for it, prints that output and its phase line.
beside() {
  local name=$1
  shift
  (
    start=$SECONDS status=0
    "$@" || status=$?
    echo "$status $((SECONDS - start))" >"build/$name.status"
  ) >"build/$name.log" 2>&1 &
  echo $! >"build/$name.pid"
}
report() {
  local name=$1 status took
  wait "$(cat "build/$name.pid")"
  cat "build/$name.log"
  read -r status took <"build/$name.status" || status=unknown
  [ "$status" = 0 ] || failed+=("$name")
  echo "phase $name: $took s (beside $2; at $((SECONDS / 60)) min $((SECONDS % 60)) s of the test command)"
}
phase ctest bash -c 'cd build && ctest -j"$(nproc)" --output-on-failure --timeout 600'
phase ui bash ci/ui-test.sh
# The fuzzer keeps one core busy for its minute, while the chart checks, the dashboard's and the
# image wait much of theirs on helm, Prometheus and Docker.
beside fuzz bash ci/fuzz.sh 60
phase chart bash ci/chart-test.sh
phase dashboard bash tests/dashboard/check.sh
wait "${downloads[@]}" || true
phase image bash ci/image.sh
report fuzz "the chart checks, the dashboard and the image"
# The kind scenarios' pods are paced by their CPU limits, and leave part of the CPU idle; the ASan
# suites (about 4 minutes of a core) run beside them, at nice 10 so that the cluster's pods come
# first. The TSan suites run after: beside the scenarios, three of `in_process_test`'s cases did
# not reach step 500 in their 30 s. Kind's node image first (on a fresh machine the background
# build may still be at Kubernetes), so that the sanitizer builds do not slow it: a failed build
# is ci/kind-e2e.sh's to report.
start=$SECONDS
bash tests/kind/build.sh >build/kind-build.log 2>&1 || true
echo "kind's node image built or found: $((SECONDS - start)) s"
beside asan nice -n 10 bash ci/sanitize.sh asan
phase kind bash ci/kind-e2e.sh
report asan "the kind phase"
phase tsan bash ci/sanitize.sh tsan
wait $ahead || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "test command: failed: ${failed[*]}"
  exit 1
fi
echo "test command: all passed"
