#!/usr/bin/env bash
# The test command: installs what it needs, builds, runs the daemon's unit and integration tests
# (ctest), the page in headless chromium (ci/ui-test.sh), the unit suites under ASan/UBSan and
# the ps core under TSan (ci/sanitize.sh), a minute of fuzzing of the frame decoder, the chart
# checks, the end-to-end test (the image, and the chart's pods as Docker containers) and the
# README's Kubernetes commands on a kind cluster built here from Go modules and Debian packages
# (ci/kind-e2e.sh, with the image ci/e2e.sh built; its node image built in the background from
# the start). Exits non-zero if any of them fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/install-deps.sh --tests debootstrap jq
# The kind node image takes longest to build (Kubernetes from its Go module: ~13 of its ~18
# minutes on 2 cores, cold; cached by tests/kind/build.sh afterwards). It is built from the start,
# at the lowest CPU priority, so it takes the cores the suites below leave idle (waiting on
# training pods, the network, timeouts) without slowing them; ci/kind-e2e.sh finds it built.
kind_log="$(mktemp)"
# In a process group of its own, so that an early exit stops all of it (its compilers too). A
# new session is a new scheduler autogroup, where nice alone would not lower it against the
# suites: the autogroup's own nice value is set too.
setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 bash tests/kind/build.sh' \
  >"$kind_log" 2>&1 &
kind_build=$!
trap 'kill -- -"$kind_build" 2>/dev/null; rm -f "$kind_log"' EXIT
bash ci/build.sh

status=0
(cd build && ctest --output-on-failure --timeout 600) || status=1
bash ci/ui-test.sh || status=1
bash ci/sanitize.sh || status=1
bash ci/fuzz.sh 60 || status=1
bash ci/chart-test.sh || status=1
bash ci/e2e.sh || status=1
# A failed background build is reported by ci/kind-e2e.sh, which builds again.
wait "$kind_build" || true
echo "== kind node image, built in the background since the start ($SECONDS s ago)"
cat "$kind_log"
bash ci/kind-e2e.sh || status=1
exit $status
