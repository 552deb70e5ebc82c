#!/usr/bin/env bash
# Many seeds of chaos_test (daemon/tests/ps/chaos_test.cpp): each seed's schedule of faults over
# an in-process cluster, in a process of its own, `batch` seeds at a time side by side (their
# threads mostly wait on sockets). Prints each seed's pass or failure (with the test's error
# lines; the whole output is kept in build/chaos/seed-N.log) and a final count; exits non-zero
# if any seed failed. Builds chaos_test first if needed (in build/, or BUILD_DIR, configured as
# docs/testing.md says). Run by hand:
#   tests/bench/chaos.sh [first [last [batch]]]      # default: seeds 1 to 200, 4 at a time
# Replay one seed, with its log lines:
#   PSTRAIN_CHAOS_LOG=1 PSTRAIN_CHAOS_SEEDS=N:N build/daemon/tests/chaos_test --log_level=message
set -uo pipefail
cd "$(dirname "$0")/../.."
first=${1:-1}
last=${2:-200}
batch=${3:-4}
build="${BUILD_DIR:-build}"
[ -f "$build/build.ninja" ] ||
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache ||
  exit 1
nice cmake --build "$build" -j2 --target chaos_test || exit 1
logs="$build/chaos"
mkdir -p "$logs"

run_seed() {  # seed: 0 if its run passed; its seconds in $logs/seed-N.seconds
  local start=$SECONDS status=0
  PSTRAIN_CHAOS_LOG=1 PSTRAIN_CHAOS_SEEDS="$1:$1" timeout 300 "$build/daemon/tests/chaos_test" \
    --log_level=message \
    >"$logs/seed-$1.log" 2>&1 || status=$?
  echo $((SECONDS - start)) >"$logs/seed-$1.seconds"
  return $status
}

passed=0
failed=()
for ((start = first; start <= last; start += batch)); do
  end=$((start + batch - 1 < last ? start + batch - 1 : last))
  declare -A pids=()
  for ((seed = start; seed <= end; ++seed)); do
    run_seed "$seed" &
    pids[$seed]=$!
  done
  for ((seed = start; seed <= end; ++seed)); do
    if wait "${pids[$seed]}"; then
      echo "seed $seed: passed ($(cat "$logs/seed-$seed.seconds") s)"
      passed=$((passed + 1))
    else
      echo "seed $seed: FAILED after $(cat "$logs/seed-$seed.seconds") s ($logs/seed-$seed.log)"
      grep -E "error: |fatal error|exception|timeout" "$logs/seed-$seed.log" | head -5 | sed 's/^/    /'
      failed+=("$seed")
    fi
  done
  unset pids
done
echo "${passed} passed, ${#failed[@]} failed${failed:+: seeds ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
