#!/usr/bin/env bash
# pstrain beside ps-lite (dmlc/ps-lite, MXNet's parameter server, on ZeroMQ) doing the same work:
# Fashion-MNIST, MLP 784-128-10, batch 100 per worker, Adam (lr 0.001) applied on 2 parameter
# servers holding the parameters in contiguous slices, workers pushing gradients and pulling
# parameters every step, asynchronously, all local processes on 127.0.0.1 (tests/bench/pslite/).
# For 2 and 8 workers, interleaved, REPEATS times (default 3), STEPS global steps (default 3000):
#   pstrain local --sync false --concurrent-workers 0   every worker computes at once, as ps-lite's
#   pslite_mnist                                        (the ps-lite peer)
#   pstrain local --sync false                          pstrain's default bound on computing workers
# and prints the medians: global steps/s, final test accuracy, and pstrain/ps-lite.
# Run on a quiet machine:  tests/bench/pslite.sh [REPEATS] [STEPS]
# PSTRAIN_BIN=<binary> picks pstrain (default build/pstrain). Builds build/pslite/pslite_mnist
# when it is missing or older than its sources (installing libzmq3-dev, libprotobuf-dev and
# protobuf-compiler when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
steps="${2:-3000}"
data=/usr/share/datasets/fashion-mnist
pstrain="${PSTRAIN_BIN:-build/pstrain}"
unset PSTRAIN_BIN  # pstrain refuses PSTRAIN_ variables it does not know
peer=build/pslite/pslite_mnist
[ -x "$pstrain" ] || { echo "no pstrain at $pstrain: build first (ci/build.sh)" >&2; exit 1; }

if [ ! -x "$peer" ] || [ -n "$(find tests/bench/pslite -newer "$peer" -type f -print -quit)" ]; then
  bash ci/install-deps.sh libzmq3-dev libprotobuf-dev protobuf-compiler zlib1g-dev
  echo "building $peer" >&2
  cmake -S tests/bench/pslite -B build/pslite -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/pslite -j "$(nproc)" >/dev/null
fi

export OPENBLAS_NUM_THREADS=1  # every process on one core's worth of BLAS, as bench.sh runs them
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
common=(--batch-size 100 --hidden-units 128 --learning-rate 0.001 --train-steps "$steps"
        --data-dir "$data")

for r in $(seq "$repeats"); do
  for w in 2 8; do
    echo "run $r/$repeats, 2 ps x $w workers" >&2
    nice -n 0 "$pstrain" local --ps 2 --workers "$w" "${common[@]}" --sync false \
      --concurrent-workers 0 --log-dir "$work/pstrain-$w.$r" \
      --summary-json "$work/pstrain-$w.$r.json" >/dev/null
    nice -n 0 "$peer" --ps 2 --workers "$w" "${common[@]}" --summary-json "$work/pslite-$w.$r.json"
    nice -n 0 "$pstrain" local --ps 2 --workers "$w" "${common[@]}" --sync false \
      --log-dir "$work/default-$w.$r" --summary-json "$work/default-$w.$r.json" >/dev/null
  done
done

python3 - "$work" "$repeats" "$steps" <<'EOF'
import glob, json, statistics, sys
work, repeats, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def values(name, field):
    return [json.load(open(p))[field] for p in sorted(glob.glob(f"{work}/{name}.*.json"))]

def median(name, field):
    return statistics.median(values(name, field))

print(f"pstrain vs ps-lite: 2 ps, batch 100, {steps} global steps, asynchronous; "
      f"medians of {repeats} interleaved runs")
print(f"{'configuration':<26}{'steps/s':>10}{'accuracy':>10}{'pstrain/ps-lite':>17}"
      f"   steps/s of each run")
for w in (2, 8):
    peer = median(f"pslite-{w}", "global_steps_per_s")
    for name, label in ((f"pstrain-{w}", f"pstrain 2x{w}"), (f"pslite-{w}", f"ps-lite 2x{w}"),
                        (f"default-{w}", f"pstrain 2x{w} (default *)")):
        rate = median(name, "global_steps_per_s")
        ratio = "" if name.startswith("pslite") else f"{rate / peer:.2f}"
        each = " ".join(f"{v:.0f}" for v in values(name, "global_steps_per_s"))
        print(f"{label:<26}{rate:>10.0f}{median(name, 'test_accuracy'):>10.4f}{ratio:>17}   {each}")
print("pstrain rows: --concurrent-workers 0 (every worker computes at once, as ps-lite's);")
print("* pstrain's default --concurrent-workers (pstrain local: its CPUs)")
EOF
