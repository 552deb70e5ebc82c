#!/usr/bin/env bash
# Builds the ps core's in-process tests with ThreadSanitizer into build-tsan/ and runs them: the
# shard's combined updates, the sync barrier, the loopback transport and the ps server and client
# under real thread interleavings. Any data race fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build-tsan "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPSTRAIN_SANITIZER=thread >/dev/null
cmake --build build-tsan -j"$(nproc)" --target shard_test in_process_test
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
status=0
for test in shard_test in_process_test; do
  echo "== $test under ThreadSanitizer"
  build-tsan/daemon/tests/$test || status=1
done
exit $status
