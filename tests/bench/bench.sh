#!/usr/bin/env bash
# Benchmarks pstrain on this machine, each figure side by side with what it is measured against,
# in one run, and prints the tables:
#   0. the headline: time to accuracy as workers grow (tests/bench/time_to_accuracy.sh);
#   1. named configurations: global steps/s, where a worker's step time goes, bytes per step,
#      time to 0.85 Fashion-MNIST test accuracy and peak RSS per role, next to the single-process
#      compute-only bound;
#   2. scaling: global steps/s for 1 ps with 1, 2, 4, 8 workers and for W/2 ps, at batch 100 and 10
#      (medians of REPEATS interleaved runs), beside 2 and 8 `pstrain single` processes computing at
#      once: what time-sharing the 2 cores costs 8 processes against 2 with no ps at all;
#   3. the capacity of one ps on one core (ps_capacity: clients that only push, the ps pinned to
#      core 0 and the clients to core 1) next to the memory-traffic floor of a push;
#   4. peers: the same work by PyTorch (a parameter server over torch.distributed.rpc, and one
#      process), from tests/bench/torch_ps.py and torch_single.py;
#   5. strangers: the reference run with 300 silent and 30 trickling connections held on ps 0's
#      port, against the same run without;
#   6. BLAS kernels: pstrain single with its own choice next to every core this CPU runs
#      (tests/bench/blas.sh);
#   7. predictions: POST /predict of `pstrain serve` beside a numpy peer, single-image latency
#      and images/s in batches of 250, keep-alive
#      (tests/bench/predict.sh).
# Run by hand on a quiet machine:  tests/bench/bench.sh [REPEATS]   (default 3; medians)
# BENCH_BASELINE=<another pstrain binary> adds its runs of the reference configuration and of the
# scaling shapes, interleaved with this build's ("before:" rows), for a change's before and after.
# Needs build/pstrain and build/ps_capacity (ci/build.sh), python3, and python3-torch for the
# peers (installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
work="$(mktemp -d)"
ps_pid=""
cleanup() {
  [ -n "$ps_pid" ] && kill "$ps_pid" 2>/dev/null && wait "$ps_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
[ -x "$bin" ] && [ -x build/ps_capacity ] || { echo "build first: ci/build.sh" >&2; exit 1; }
command -v taskset >/dev/null || { echo "needs taskset (util-linux)" >&2; exit 1; }
# Debian's python3 (with python3-torch), whatever python3 comes first on PATH.
/usr/bin/python3 -c "import torch" 2>/dev/null || bash ci/install-deps.sh python3-torch
export OPENBLAS_NUM_THREADS=1  # every process on one core's worth of BLAS, as in the issue's table
# pstrain's own choice of BLAS kernels, as users get it (blas.sh sets each core in turn).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE

# run NAME REPEAT COMMAND ARGS...: one pstrain run, its summary in $work/NAME.REPEAT.json, its
# start time (before the command: data loading counts) in $work/NAME.REPEAT.start.
run() {
  local name=$1 repeat=$2
  shift 2
  local dir="$work/$name.$repeat" binary="$bin"
  [ "${name#before-}" != "$name" ] && binary="$BENCH_BASELINE"
  # Every worker computes at once (--concurrent-workers 0): these tables measure the ps core's
  # throughput; time_to_accuracy.sh measures pstrain local's default bound beside it. (A baseline
  # from before the bound has no such flag: its workers all compute at once anyway.)
  if [ "$1" = local ] && "$binary" local --help 2>&1 | grep -q -- --concurrent-workers; then
    set -- "$@" --concurrent-workers 0
  fi
  date +%s.%N >"$dir.start"
  "$binary" "$@" --log-dir "$dir" --summary-json "$dir.json" >/dev/null
}

# both NAME REPEAT ARGS...: run NAME, and its baseline twin before-NAME when BENCH_BASELINE is set.
both() {
  local name=$1 repeat=$2
  shift 2
  run "$name" "$repeat" "$@"
  if [ -n "${BENCH_BASELINE:-}" ]; then run "before-$name" "$repeat" "$@"; fi
}

# alone NAME REPEAT N ARGS...: N `pstrain single` runs at once, their summaries in
# $work/NAME.REPEAT/<i>.json.
alone() {
  local name=$1 repeat=$2 n=$3
  shift 3
  local dir="$work/$name.$repeat" pids=()
  mkdir -p "$dir"
  for i in $(seq "$n"); do
    "$bin" single "$@" --summary-json "$dir/$i.json" >/dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}

# torch NAME REPEAT SCRIPT ARGS...: the PyTorch peer's run, its summary in $work/NAME.REPEAT.json.
torch() {
  local name=$1 repeat=$2 script=$3
  shift 3
  /usr/bin/python3 "tests/bench/$script" "$@" --data-dir "$data" --summary-json "$work/$name.$repeat.json" >/dev/null
}

model=(--hidden-units 128 --learning-rate 0.001)
reference=(--ps 2 --workers 2 "${model[@]}" --batch-size 100 --train-steps 3000)
echo "0/7 time to accuracy (tests/bench/time_to_accuracy.sh)" >&2
headline="$(bash tests/bench/time_to_accuracy.sh "$repeats")"

echo "1/7 named configurations" >&2
for r in $(seq "$repeats"); do
  both reference "$r" local "${reference[@]}" --data-dir "$data"
  run compute-only "$r" single "${model[@]}" --batch-size 100 --train-steps 3000 --data-dir "$data"
  run log-every-1000 "$r" local "${reference[@]}" --data-dir "$data" --log-every-steps 1000
  # Evaluating every 100 steps costs worker 0 time: measured apart from the throughput runs.
  run eval-every-100 "$r" local "${reference[@]}" --data-dir "$data" --eval-every-steps 100
done
run 784-256-256-10 1 local --ps 2 --workers 2 --hidden-units 256,256 --batch-size 100 --train-steps 3000 --data-dir "$data"
run sync 1 local "${reference[@]}" --sync --data-dir "$data"
run seed-settings 1 local --ps 2 --workers 2 --hidden-units 128 --batch-size 20 --learning-rate 0.001 --train-steps 200 --data-dir "$data"

echo "2/7 scaling" >&2
# Interleaved, so that a machine drifting faster or slower over the minutes reaches every shape.
# Batch 10 trains 30,000 steps: about as long as batch 100's 3000 (2-4 s), so start-up and the
# VM's drift weigh on both alike.
for r in $(seq "$repeats"); do
  for batch in 100 10; do
    steps=$((batch == 100 ? 3000 : 30000))
    for shape in 1x1 1x2 1x4 1x8 2x4 4x8; do
      both "scale-b$batch-$shape" "$r" local --ps "${shape%x*}" --workers "${shape#*x}" "${model[@]}" \
        --batch-size "$batch" --train-steps "$steps" --eval-every-steps 0 --data-dir "$data"
    done
    # Each process trains as long as one of 1 ps + 2 workers' workers.
    for n in 2 8; do
      alone "alone-b$batch-$n" "$r" "$n" "${model[@]}" --batch-size "$batch" \
        --train-steps $((steps / 2)) --data-dir "$data"
    done
  done
done

echo "3/7 ps capacity" >&2
capacity=(--ps 1 --workers 8 --hidden-units 128 --train-steps 1000000000000 --log-to-stdout false
  --ps-hosts 127.0.0.1:18700)
taskset -c 0 "$bin" run --role ps --index 0 --ps-port 18700 --http-port 18701 \
  --log-dir "$work/capacity-ps" "${capacity[@]}" &
ps_pid=$!
for clients in 1 2 4; do
  taskset -c 1 build/ps_capacity --clients "$clients" --seconds 3 --ps-pid "$ps_pid" \
    "${capacity[@]}" >"$work/capacity.$clients.json"
done
kill "$ps_pid" && wait "$ps_pid" || true
ps_pid=""

echo "4/7 peers" >&2
for r in $(seq "$repeats"); do
  torch torch-ps-2x2 "$r" torch_ps.py --ps 2 --workers 2 "${model[@]}" --batch-size 100 --train-steps 3000
  torch torch-single "$r" torch_single.py "${model[@]}" --batch-size 100 --train-steps 3000
done
run pstrain-2x8 1 local --ps 2 --workers 8 "${model[@]}" --batch-size 100 --train-steps 3000 --data-dir "$data"
torch torch-ps-2x8 1 torch_ps.py --ps 2 --workers 8 "${model[@]}" --batch-size 100 --train-steps 3000

echo "5/7 strangers" >&2
for r in $(seq "$repeats"); do
  run plain "$r" local "${reference[@]}" --data-dir "$data"
  python3 tests/bench/strangers.py "$work/strangers.$r/ps-0/events.jsonl" "$work/strangers.$r.json" \
    >"$work/strangers.$r.held" &
  held=$!
  run strangers "$r" local "${reference[@]}" --data-dir "$data"
  wait "$held"
done

echo "0. $headline"
echo
python3 tests/bench/report.py "$work" "$repeats"
echo
echo "6. BLAS kernels"
bash tests/bench/blas.sh "$repeats"
echo
echo "7. Predictions: POST /predict of pstrain serve and of the same model in numpy behind Python's http.server (784-128-10), Fashion-MNIST test images as JSON, keep-alive"
bash tests/bench/predict.sh
