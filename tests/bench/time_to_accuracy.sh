#!/usr/bin/env bash
# Time to accuracy, the benchmark's headline: from the command's start (data loading included) to
# the first parameters whose test accuracy on the whole Fashion-MNIST test set reaches 0.85 (and
# 0.87), for 2 ps with 1, 2, 4 and 8 workers at batch 100 and at values.yml's batch 20, in the
# default mode (ps 0 lets as many workers compute at once as this machine has CPUs), with that
# bound off (--concurrent-workers 0: every worker computes at once, the previous default) and in
# sync mode; beside them the PyTorch parameter server (tests/bench/torch_ps.py) with 2 and 8
# workers. Worker 0 snapshots the parameters every 100 global steps and evaluates them off
# the training thread (the PyTorch peer after training); each run trains 6000 global steps, so
# the table also gives test accuracy at 3000 and 6000 global steps, steps/s, and the staleness of
# a push (global steps between the parameters its gradient was computed on and its own: mean and
# the 99th percentile's histogram bucket). Medians of REPEATS runs, the configurations interleaved.
# Run by hand on a quiet machine:  tests/bench/time_to_accuracy.sh [REPEATS]   (default 3)
# TTA_BASELINE=<another pstrain binary> adds its runs of the async configurations with 2 and 8
# workers, interleaved with this build's ("before:" rows), for a change's before and after.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null || bash ci/install-deps.sh python3-torch
export OPENBLAS_NUM_THREADS=1
steps="${TTA_STEPS:-6000}"  # fewer for a quick check of the script

# run NAME REPEAT WORKERS BATCH ARGS...: one pstrain local run; its log dir, summary and start
# time in $work/NAME.REPEAT*.
run() {
  local name=$1 repeat=$2 workers=$3 batch=$4
  shift 4
  local dir="$work/$name.$repeat"
  local binary="$bin"
  if [ "${name#before-}" != "$name" ]; then binary="$TTA_BASELINE"; fi
  date +%s.%N >"$dir.start"
  "$binary" local --ps 2 --workers "$workers" --hidden-units 128 --learning-rate 0.001 \
    --batch-size "$batch" --train-steps "$steps" --eval-every-steps 100 \
    --log-every-steps 1000 --data-dir "$data" --log-dir "$dir" --summary-json "$dir.json" "$@" >/dev/null
}

torch() {
  local name=$1 repeat=$2 workers=$3
  date +%s.%N >"$work/$name.$repeat.start"
  /usr/bin/python3 tests/bench/torch_ps.py --ps 2 --workers "$workers" --hidden-units 128 \
    --learning-rate 0.001 --batch-size 100 --train-steps "$steps" \
    --eval-every-steps 100 --data-dir "$data" \
    --summary-json "$work/$name.$repeat.json" >/dev/null
}

for r in $(seq "$repeats"); do
  echo "time to accuracy: round $r of $repeats" >&2
  for batch in 100 20; do
    for workers in 1 2 4 8; do
      run "b$batch-w$workers" "$r" "$workers" "$batch"
      if [ -n "${TTA_BASELINE:-}" ] && [ "$workers" -ge 2 ] && [ "$workers" != 4 ]; then
        run "before-b$batch-w$workers" "$r" "$workers" "$batch"
      fi
    done
    run "b$batch-w8-unbounded" "$r" 8 "$batch" --concurrent-workers 0
  done
  run "b100-w2-sync" "$r" 2 100 --sync
  run "b100-w8-sync" "$r" 8 100 --sync
  torch "torch-w2" "$r" 2
  torch "torch-w8" "$r" 8
done
python3 tests/bench/time_to_accuracy_report.py "$work" "$repeats"
