#!/usr/bin/env bash
# Planted faults over many runs: does the run's history checker catch what it is there to catch
# in runs other than the short ones of ctest's planted_faults_test? Each planted fault is a
# failpoint (daemon/include/pstrain/common/failpoint.hpp) set through PSTRAIN_FAILPOINTS, which
# the in-process cluster of the tests reads as pstrain does: no patch, no rebuild. For each, runs
# a test of the build PLANTED_RUNS times (default 3) and counts the runs whose history check
# flagged the invariant the fault breaks. Exits 1 where a planted fault was never flagged, 2
# where the test is not built.
#
#   bash tests/history/planted_faults.sh
#
# PLANTED_TEST (default "chaos_test") is the command line under the build's daemon/tests/; run N
# has "N:N" in the environment variable named by PLANTED_SEED_VAR (default PSTRAIN_CHAOS_SEEDS),
# so a seeded test draws schedule N. BUILD (default build/) is the build to use.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${PLANTED_RUNS:-3}"
command="${PLANTED_TEST:-chaos_test}"
seed_var="${PLANTED_SEED_VAR:-PSTRAIN_CHAOS_SEEDS}"
tests="${BUILD:-$root/build}/daemon/tests"
logs="${BUILD:-$root/build}/planted"
[ -x "$tests/${command%% *}" ] || { echo "no $tests/${command%% *}: build it first"; exit 2; }
mkdir -p "$logs"

# name|failpoints|the prefix of the violation line the fault must cause
faults=(
  "a_push_applied_twice|ps.after-apply=3*again|push-once:"
  "a_step_skipped|shard.step=1*skip|step-sequence:"
  "a_sync_worker_counted_twice|shard.sync-barrier=skip|sync-worker-once:"
  "a_recut_zeroes_state|recut.install=zero|recut-values:"
  "an_install_loses_a_range|recut.install=1*drop(40)|recut-values:"
)

summary=()
missed=0
for fault in "${faults[@]}"; do
  IFS='|' read -r name failpoints invariant <<<"$fault"
  flagged=0
  for run in $(seq 1 "$runs"); do
    log="$logs/$name.run$run.log"
    # shellcheck disable=SC2086
    env PSTRAIN_FAILPOINTS="$failpoints" "$seed_var=$run:$run" "$tests/"$command >"$log" 2>&1
    if grep -q "$invariant" "$log"; then
      flagged=$((flagged + 1))
      echo "$name run $run: flagged: $(grep -m1 -o "$invariant.*" "$log" | cut -c1-160)"
    else
      echo "$name run $run: not flagged (log: $log)"
    fi
  done
  summary+=("$name: $flagged of $runs runs flagged ($invariant)")
  [ "$flagged" -gt 0 ] || missed=$((missed + 1))
done
printf '%s\n' "${summary[@]}"
[ "$missed" -eq 0 ]
