#!/usr/bin/env bash
# What each wire encoding costs in accuracy, which does not depend on cores or links: global
# steps to 0.87 with 1, 4 and 12 workers (ENC_WORKERS) computing at once (sync, as on a machine
# with a core per process or on Kubernetes; `pstrain local --concurrent-workers 0`), and the test
# accuracy after 6,000 global steps with `pstrain local`'s defaults and 2 workers; 2 ps, batch
# 100, Fashion-MNIST, snapshots every 25 global steps. Encodings: ENC_ENCODINGS (PUSH/PULL pairs,
# default fp32/fp32 bf16/bf16 q8/q4 log4/q3 log4/q2); rounds (ENC_ROUNDS, default 3) use seeds 1, 2,
# 3, interleaved. Writes the table to $OUT/encodings.txt (default OUT=build/encodings).
#   tests/bench/encodings.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/encodings}"
bin="${ENC_BIN:-build/pstrain}"
data=/usr/share/datasets/fashion-mnist
workers="${ENC_WORKERS:-1 4 12}"
encodings="${ENC_ENCODINGS:-fp32/fp32 bf16/bf16 q8/q4 log4/q3 log4/q2}"
rounds="${ENC_ROUNDS:-3}"
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1

# Global steps a run trains: past 0.87 with sync and the scaled learning rate.
steps_for() { case "$1" in 1) echo 4000 ;; 2|3|4) echo 1600 ;; *) echo 900 ;; esac; }

# run NAME SEED WORKERS STEPS PUSH PULL ARGS...: one pstrain local run, left in $work/NAME*.
run() {
  local name=$1 seed=$2 w=$3 steps=$4 push=$5 pull=$6
  shift 6
  local base="$work/$name"
  date +%s.%N >"$base.start"
  "$bin" local --ps 2 --workers "$w" --hidden-units 128 --batch-size 100 --seed "$seed" \
    --train-steps "$steps" --eval-every-steps 25 --log-every-steps 1000 --data-dir "$data" \
    --push-encoding "$push" --pull-encoding "$pull" --log-dir "$base" \
    --summary-json "$base.json" "$@" >/dev/null 2>&1 || echo '{}' >"$base.json"
  echo "$name: $(grep -o '"test_accuracy": [0-9.]*' "$base.json")" >&2
}

for r in $(seq "$rounds"); do
  for encoding in $encodings; do
    e="${encoding/\//-}"
    for w in $workers; do
      run "together.w$w.$e.r$r" "$r" "$w" "$(steps_for "$w")" "${encoding%/*}" "${encoding#*/}" \
        --concurrent-workers 0
    done
    run "defaults.w2.$e.r$r" "$r" 2 6000 "${encoding%/*}" "${encoding#*/}"
  done
done

PYTHONPATH=tests/bench python3 - "$work" >"$out/encodings.txt" <<'EOF'
import glob, os, sys
from accuracy_curve import curve, fmt, median, steps_to

work = sys.argv[1]
rows = {}
for path in sorted(glob.glob(os.path.join(work, "*.start"))):
    base = path[:-len(".start")]
    kind, w, encoding, _ = os.path.basename(base).split(".")
    points, summary, _ = curve(base)
    rows.setdefault((kind, int(w[1:]), encoding.replace("-", "/")), []).append(
        (steps_to(points, 0.87), summary.get("test_accuracy"), summary.get("bytes_per_step")))
table = {k: [median(r[i] for r in v) for i in range(3)] for k, v in rows.items()}
encodings = sorted({k[2] for k in table}, key=lambda e: (e != "fp32/fp32", e))
workers = sorted({k[1] for k in table if k[0] == "together"})
rounds = max(len(v) for v in rows.values())
print(f"pstrain local, 2 ps, Fashion-MNIST, 784-128-10, batch 100; medians of {rounds} seeds")
head = f"{'push/pull':>9} {'bytes/step':>10} " + " ".join(f"{'s(0.87) w' + str(w):>11} {'vs fp32':>7}" for w in workers) + \
       f" {'acc@6000':>8} {'vs fp32':>8}"
print(head)
for e in encodings:
    cells = []
    for w in workers:
        s = table.get(("together", w, e), [None] * 3)[0]
        f = table.get(("together", w, "fp32/fp32"), [None] * 3)[0]
        cells.append(f"{fmt(s, '{:.0f}'):>11} {fmt(s / f if s and f else None, '{:.2f}x'):>7}")
    acc = table.get(("defaults", 2, e), [None] * 3)
    fp32 = table.get(("defaults", 2, "fp32/fp32"), [None] * 3)
    diff = acc[1] - fp32[1] if acc[1] is not None and fp32[1] is not None else None
    print(f"{e:>9} {fmt(acc[2], '{:,.0f}'):>10} " + " ".join(cells) +
          f" {fmt(acc[1], '{:.4f}'):>8} {fmt(diff, '{:+.4f}'):>8}")
EOF
cat "$out/encodings.txt"
