#!/usr/bin/env bash
# Planted faults: does the run's history checker catch what it is there to catch? For each patch
# of the daemon in tests/history/planted/, applied in turn to one throwaway copy of the tree as
# committed (HEAD), builds the test that runs it, runs it PLANTED_RUNS times (default 3) and counts
# the runs whose history check flagged the invariant the fault breaks. Exits 1 where a planted
# fault was never flagged, 2 where a patch no longer applies or a build fails.
#
#   bash tests/history/planted_faults.sh
#
# The test each patch runs (a ctest-less command line under the build's daemon/tests/), by patch:
#   PLANTED_TEST_A  a: a push applied twice          (default: network_fault_test, a reset)
#   PLANTED_TEST_B  b: a global step skipped          (default: network_fault_test, a reset)
#   PLANTED_TEST_C  c: a sync step counting a worker twice (default: in_process_test, a worker
#                   that reconnects and pushes again while its last push waits at the barrier)
# PLANTED_TEST, where set, replaces all three (e.g. "chaos_test"); each run has its number in
# the environment variable named by PLANTED_SEED_VAR (default PSTRAIN_TEST_SEED) for a seeded
# test to draw its schedule from. PLANTED_DIR (default build/planted) holds the copy and its
# build (under the tree, so that ccache finds the objects of the project's own build).
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${PLANTED_RUNS:-3}"
seed_var="${PLANTED_SEED_VAR:-PSTRAIN_TEST_SEED}"
work="${PLANTED_DIR:-$root/build/planted}"
copy="$work/tree"

reset_test="network_fault_test --run_test=a_reset_in_the_middle_of_a_frame_is_survived_by_reconnecting"
sync_test="in_process_test --run_test=a_worker_that_reconnects_while_its_push_waits_at_the_barrier_pushes_once_and_fresh"
declare -A test_of=(
  [a_push_applied_twice]="${PLANTED_TEST:-${PLANTED_TEST_A:-$reset_test}}"
  [b_step_skipped]="${PLANTED_TEST:-${PLANTED_TEST_B:-$reset_test}}"
  [c_sync_worker_counted_twice]="${PLANTED_TEST:-${PLANTED_TEST_C:-$sync_test}}"
)
# The invariant each fault breaks: the prefix of the checker's violation line.
declare -A invariant_of=(
  [a_push_applied_twice]="push-once:"
  [b_step_skipped]="step-sequence:"
  [c_sync_worker_counted_twice]="sync-worker-once:"
)

rm -rf "$copy"
mkdir -p "$copy"
git -C "$root" archive HEAD | tar -x -C "$copy" || exit 2
cmake -S "$copy" -B "$copy/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 2; }

summary=()
missed=0
for patch in "$root"/tests/history/planted/*.patch; do
  name="$(basename "$patch" .patch)"
  command="${test_of[$name]:?no test for $name}"
  invariant="${invariant_of[$name]:?no invariant for $name}"
  target="${command%% *}"
  patch -d "$copy" -p1 --quiet <"$patch" || { echo "$name: does not apply"; exit 2; }
  if ! nice cmake --build "$copy/build" -j2 --target "$target" >"$work/$name.build.log" 2>&1; then
    tail -30 "$work/$name.build.log"
    exit 2
  fi
  flagged=0
  for run in $(seq 1 "$runs"); do
    log="$work/$name.run$run.log"
    # shellcheck disable=SC2086
    env "$seed_var=$run" "$copy/build/daemon/tests/"$command >"$log" 2>&1
    if grep -q "$invariant" "$log"; then
      flagged=$((flagged + 1))
      echo "$name run $run: flagged: $(grep -m1 -o "$invariant.*" "$log" | sed "s/\x1b\[[0-9;]*m//g" | cut -c1-160)"
    else
      echo "$name run $run: not flagged (log: $log)"
    fi
  done
  patch -d "$copy" -p1 -R --quiet <"$patch" || exit 2
  summary+=("$name: $flagged of $runs runs flagged ($invariant)")
  [ "$flagged" -gt 0 ] || missed=$((missed + 1))
done
printf '%s\n' "${summary[@]}"
[ "$missed" -eq 0 ]
