#!/usr/bin/env bash
# Fuzzes the wire-frame decoder and a ps's push decoding with libFuzzer for a bounded time
# (default 60 s).
# `ci/fuzz.sh build`: only the build (ci/test.sh runs it ahead, in the background).
# Needs clang-14 and libclang-rt-14-dev (ci/install-deps.sh --tests installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
# One build at a time; a second waits, then finds it up to date.
mkdir -p build-fuzz
(
  flock 9 &&
    CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
      -DPSTRAIN_FUZZ=ON >/dev/null &&
    cmake --build build-fuzz --target frame_fuzzer -j"$(nproc)" >/dev/null
) 9>build-fuzz/build.lock
[ "${1:-}" = build ] && exit
seconds="${1:-60}"
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
# Valid frames to start from: a factored push is too deep for blind mutation to find.
cp daemon/fuzz/seeds/* "$corpus"
status=0
build-fuzz/daemon/frame_fuzzer -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
  "$corpus" >"$corpus.log" 2>&1 || status=$?
grep -E "^stat::number_of_executed_units|ERROR|SUMMARY" "$corpus.log" || true
rm -f "$corpus.log"
if [ "$status" -eq 0 ]; then echo "PASS frame fuzzer: ${seconds} s without a crash"; else echo "FAIL frame fuzzer (exit $status)"; fi
exit "$status"
