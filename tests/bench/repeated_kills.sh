#!/usr/bin/env bash
# The repeated-kill run of docs/faults.md, too long for the test command: `pstrain local` (2 ps,
# 3 workers, asynchronous, 100,000 steps) with a child chosen at random killed with SIGKILL every
# second until the run completes; it must end at exactly 100,000 steps with test accuracy of at
# least 0.84. About 10-20 minutes on 2 cores. Prints the time, the kills and each child's restarts.
# Needs a built build/pstrain and fault_test (ci/build.sh). Run by hand:
#   tests/bench/repeated_kills.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x build/pstrain ] && [ -x build/daemon/tests/fault_test ] ||
  { echo "build first: ci/build.sh" >&2; exit 1; }
TEST_PSTRAIN_BINARY="$PWD/build/pstrain" build/daemon/tests/fault_test \
  --run_test=a_child_killed_every_second_through_100000_steps --log_level=message
