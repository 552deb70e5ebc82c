#!/usr/bin/env bash
# Time and global steps to accuracy 0.85 and 0.87 as workers grow, on a many-core machine, with
# pstrain's defaults (`pstrain local`, 2 ps, batch 100, hidden 128, sync: auto): 1, 2, 4, 8 and 12
# workers (MC_WORKERS), plus 8 workers asynchronous (--sync false) for comparison (MC_ASYNC, empty
# for none). A short cut of workers_to_accuracy.sh, without the PyTorch peer, for a machine
# without the project's libraries: with a build packed into .device/ (pstrain, its shared
# libraries, Fashion-MNIST, and env.sh, which unpacks the libraries and sets their path), from the
# project's root:
#   source .device/env.sh && bash tests/bench/many_cores.sh
# Time runs from the command's start (data loading included) to the first snapshot (every 50
# global steps) whose accuracy on the whole Fashion-MNIST test set reaches 0.85 and 0.87.
# MC_LINK (a tc rate such as 1gbit; default unlimited) puts each ps behind a link of its own at
# that rate (tests/bench/links.sh, as root): the runs are then `pstrain run` processes, as pods
# are, whose ps ports the links shape.
# Rounds (MC_ROUNDS, default 3) repeat every run, interleaved; a run starts only while the script
# has run less than MC_DEADLINE_S seconds (default 300), so the table comes out inside the limit.
# Writes the table to $OUT/many_cores.txt and the whole log to $OUT/log.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/many-cores}"
mkdir -p "$out"
{
bin="${PSTRAIN_BIN:-.device/pstrain}"
[ -x "$bin" ] || bin=build/pstrain
data="${DATA_DIR:-.device/data}"
[ -f "$data/train-images-idx3-ubyte.gz" ] || data=/usr/share/datasets/fashion-mnist
workers="${MC_WORKERS:-1 2 4 8 12}"
async="${MC_ASYNC-8}"
rounds="${MC_ROUNDS:-3}"
deadline="${MC_DEADLINE_S:-300}"
run_limit="${MC_RUN_LIMIT_S:-120}"
link="${MC_LINK:-unlimited}"
export OPENBLAS_NUM_THREADS=1
work="$(mktemp -d)"
began=$SECONDS
source tests/bench/links.sh
trap 'clear_links' EXIT
shape_links "$link" 2

echo "nproc: $(nproc); each ps's link: $link"
lscpu | head -20
echo "binary: $bin ($(sha256sum "$bin" | cut -c1-16)); data: $data"

# Global steps a run trains: about twice the steps the repo measured to 0.87 with sync
# (2650/1500/850/550/400 for 1/2/4/8/12 workers); MC_STEPS_<W> overrides.
steps_for() {
  local v="MC_STEPS_$1"
  if [ -n "${!v:-}" ]; then echo "${!v}"; return; fi
  case "$1" in 1) echo 5000 ;; 2) echo 3000 ;; 3|4) echo 2000 ;; 5|6|7|8) echo 1500 ;; *) echo 1000 ;; esac
}

# run NAME WORKERS STEPS ARGS...: one pstrain local run, left in $work/NAME{,.start,.json,.out}.
run() {
  local name=$1 w=$2 steps=$3
  shift 3
  if [ $((SECONDS - began)) -ge "$deadline" ]; then echo "skip $name: past ${deadline} s"; return; fi
  local base="$work/$name" rc=0
  local settings=(--hidden-units 128 --batch-size 100 --train-steps "$steps" --eval-every-steps 50
    --log-every-steps 1000 --data-dir "$data" "$@")
  if [ "$link" != unlimited ]; then
    touch "$base.out"
    run_processes "$bin" "$base" 2 "$w" "${settings[@]}"
  else
    date +%s.%N >"$base.start"
    timeout -k 5 "$run_limit" "$bin" local --ps 2 --workers "$w" --log-dir "$base" \
      --summary-json "$base.json" "${settings[@]}" >"$base.out" 2>&1
    rc=$?
  fi
  [ -s "$base.json" ] || echo '{}' >"$base.json"
  echo "$name: rc $rc, $(grep -o 'global step [0-9]* in .*' "$base.out" | tail -1)"
  [ "$rc" = 0 ] || tail -5 "$base.out"
}

for r in $(seq "$rounds"); do
  for w in $workers; do run "w$w.r$r" "$w" "$(steps_for "$w")"; done
  for w in $async; do run "async-w$w.r$r" "$w" "${MC_ASYNC_STEPS:-6000}" --sync false; done
done

PYTHONPATH=tests/bench python3 - "$work" "$(nproc)" >"$out/many_cores.txt" <<'EOF'
import glob, os, re, sys
from accuracy_curve import curve, first_at, fmt, median, steps_to

work, cpus = sys.argv[1], sys.argv[2]
rows = {}
for path in sorted(glob.glob(os.path.join(work, "*.start"))):
    base = path[:-len(".start")]
    name, _, rnd = os.path.basename(base).rpartition(".")
    points, summary, _ = curve(base)
    mode = "?"
    try:
        mode = re.search(r"of a (\w+) run", open(os.path.join(base, "ps-0", "deploy.log")).read()).group(1)
    except (OSError, AttributeError):
        pass
    final = summary.get("test_accuracy", points[-1][2] if points else None)
    rows.setdefault(name, []).append(
        (rnd, mode, first_at(points, 0.85), first_at(points, 0.87), steps_to(points, 0.85),
         steps_to(points, 0.87), final, summary.get("global_step"), summary.get("global_steps_per_s"),
         summary.get("elapsed_s")))

print(f"pstrain local, 2 ps, Fashion-MNIST, 784-128-10, batch 100, eval every 50 global steps, {cpus} CPUs")
print("time from the command's start; each run, then the median over rounds")
head = f"{'run':16} {'workers':>7} {'mode':>5} {'t(0.85)':>8} {'t(0.87)':>8} {'s(0.85)':>7} {'s(0.87)':>7} {'final':>7} {'steps':>6} {'steps/s':>8} {'total':>7}"
print(head)
def line(label, w, mode, v):
    t85, t87, s85, s87, final, steps, rate, total = v
    return (f"{label:16} {w:>7} {mode:>5} {fmt(t85, '{:.2f} s'):>8} {fmt(t87, '{:.2f} s'):>8} "
            f"{fmt(s85, '{:.0f}'):>7} {fmt(s87, '{:.0f}'):>7} {fmt(final, '{:.4f}'):>7} "
            f"{fmt(steps, '{:.0f}'):>6} {fmt(rate, '{:.0f}'):>8} {fmt(total, '{:.2f} s'):>7}")
order = sorted(rows, key=lambda n: (n.startswith("async"), int(n.rpartition("w")[2])))
medians = []
for name in order:
    w = int(name.rpartition("w")[2])
    for r in rows[name]:
        print(line(f"{name}.{r[0]}", w, r[1], r[2:]))
    medians.append(line(f"{name} median", w, rows[name][0][1], [median(r[i] for r in rows[name]) for i in range(2, 10)]))
print(head)
print("\n".join(medians))
EOF
cat "$out/many_cores.txt"
echo "done in $((SECONDS - began)) s"
rm -rf "$work"
} 2>&1 | tee "$out/log"
