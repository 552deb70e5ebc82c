#!/usr/bin/env bash
# Time and global steps to accuracy as workers grow, with the defaults: 2 ps and 1, 2, 4, 8 and 12
# workers (TTA_WORKERS) at batch 100, each `pstrain local` with nothing of its mode set, beside the
# PyTorch parameter server (tests/bench/torch_ps.py) with as many workers. Time runs from the
# command's start (data loading included) to the first snapshot whose accuracy on the whole
# Fashion-MNIST test set reaches 0.85 and 0.87; snapshots every 50 global steps.
# On a machine with fewer CPUs than processes the defaults bound the workers computing at once to
# the CPUs (asynchronously); the "all at once" rows (--concurrent-workers 0, the mode every worker
# computing at once gets, as on a machine with a core per process or on Kubernetes) give the
# global steps to each target that a many-core machine needs: they do not depend on the cores.
# A last part trains values.yml's settings (batch 20, 200 global steps) with 1 and 12 workers.
# Writes the table and an SVG plot (t(0.85) and t(0.87) against workers) to OUT (default
# build/workers-to-accuracy.{txt,svg}). Run by hand on a quiet machine:
#   tests/bench/workers_to_accuracy.sh [REPEATS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
out="${OUT:-build/workers-to-accuracy}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null || bash ci/install-deps.sh python3-torch
export OPENBLAS_NUM_THREADS=1
workers="${TTA_WORKERS:-1 2 4 8 12}"
cpus="$(nproc)"

# Global steps a run of W workers trains: enough to pass 0.87 with every worker computing at once
# (a sync step averages W gradients, so more workers need fewer steps), and no more: 12 sync
# workers on 2 cores make about 60 global steps/s.
steps_for() { if [ "$1" -le 2 ]; then echo 6000; elif [ "$1" -le 4 ]; then echo 3000; else echo 2000; fi; }

# run NAME REPEAT WORKERS STEPS BATCH ARGS...: one pstrain local run, left in $work/NAME.REPEAT*.
run() {
  local name=$1 repeat=$2 w=$3 steps=$4 batch=$5
  shift 5
  local dir="$work/$name.$repeat"
  date +%s.%N >"$dir.start"
  "$bin" local --ps 2 --workers "$w" --hidden-units 128 --batch-size "$batch" \
    --train-steps "$steps" --eval-every-steps 50 --log-every-steps 1000 --data-dir "$data" \
    --log-dir "$dir" --summary-json "$dir.json" "$@" >/dev/null
}

torch() {
  local name=$1 repeat=$2 w=$3 steps=$4
  date +%s.%N >"$work/$name.$repeat.start"
  /usr/bin/python3 tests/bench/torch_ps.py --ps 2 --workers "$w" --hidden-units 128 \
    --learning-rate 0.001 --batch-size 100 --train-steps "$steps" --eval-every-steps 50 \
    --data-dir "$data" --summary-json "$work/$name.$repeat.json" >/dev/null
}

for r in $(seq "$repeats"); do
  echo "workers to accuracy: round $r of $repeats" >&2
  for w in $workers; do
    run "defaults-w$w" "$r" "$w" 6000 100
    if [ $((w + 2)) -gt "$cpus" ]; then run "together-w$w" "$r" "$w" "$(steps_for "$w")" 100 --concurrent-workers 0; fi
    torch "torch-w$w" "$r" "$w" 6000
  done
  for w in 1 12; do run "values-w$w" "$r" "$w" 200 20 --concurrent-workers 0; done
done
mkdir -p "$(dirname "$out")"
python3 tests/bench/workers_to_accuracy_report.py "$work" "$repeats" "$cpus" "$workers" "$out.svg" | tee "$out.txt"
echo "plot: $out.svg" >&2
