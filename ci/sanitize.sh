#!/usr/bin/env bash
# The unit suites under sanitizers: AddressSanitizer with UndefinedBehaviorSanitizer (build-asan/,
# every test labelled unit), and ThreadSanitizer (build-tsan/) for every suite that runs threads
# (labelled threads): the shard's combined updates, the sync barrier, the step gate, the loopback
# transport, connections, the dialer, the ps server and client and the metrics endpoint under real
# thread interleavings. Any report fails the run.
# `ci/sanitize.sh build`: only the two builds (ci/test.sh runs it ahead, in the background);
# `ci/sanitize.sh asan` or `ci/sanitize.sh tsan`: one build and its suites.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# build DIR SANITIZER TARGETS...: one build of a tree at a time; a second waits, then finds it
# up to date.
build() {
  local dir=$1 sanitizer=$2
  shift 2
  mkdir -p "$dir"
  (
    flock 9 &&
      cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON \
        -DPSTRAIN_SANITIZER="$sanitizer" >/dev/null &&
      cmake --build "$dir" -j"$(nproc)" --target "$@"
  ) 9>"$dir/build.lock"
}
build_asan() { build build-asan address,undefined unit_tests; }
build_tsan() { build build-tsan thread thread_tests; }

case "${1:-}" in
  "" | build | asan | tsan) ;;
  *) echo "usage: ci/sanitize.sh [build | asan | tsan]" >&2; exit 2 ;;
esac
if [ "${1:-}" = build ]; then
  status=0
  build_asan || status=1
  build_tsan || status=1
  exit $status
fi

status=0
if [ "${1:-asan}" = asan ]; then
  build_asan
  echo "== unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
  ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
    ctest --test-dir build-asan -L unit --output-on-failure || status=1
fi

if [ "${1:-tsan}" = tsan ]; then
  build_tsan
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
  # OpenBLAS is not instrumented: its thread pool's hand-offs are invisible to TSan, which would
  # report the pool's writes to a product as races with its reader. One BLAS thread: pstrain's
  # own threads are what is checked.
  export OPENBLAS_NUM_THREADS=1
  # Two suites at a time: in_process_test and recut_test are nearly all of the time, and each
  # keeps about one core busy (docs/testing.md: 354 s on 2 cores, against 595 one at a time).
  echo "== the suites that run threads (ctest label threads) under ThreadSanitizer"
  ctest --test-dir build-tsan -L threads -j"$(nproc)" --output-on-failure || status=1
fi
exit $status
