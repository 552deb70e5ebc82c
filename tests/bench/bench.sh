#!/usr/bin/env bash
# Benchmarks pstrain on this machine and prints one table: global steps/s, where a worker's step
# time goes, bytes per step, time to 0.85 Fashion-MNIST test accuracy and peak RSS per role, for
# named configurations, next to the single-process compute-only bound. Run by hand:
#   tests/bench/bench.sh [REPEATS]        (default 3; medians are printed)
# Needs a built build/pstrain (ci/build.sh) and python3 for the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats="${1:-3}"
data=/usr/share/datasets/fashion-mnist
bin=build/pstrain
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -x "$bin" ] || { echo "build first: ci/build.sh" >&2; exit 1; }

# run NAME REPEAT COMMAND ARGS...: one run, its summary in $work/NAME.REPEAT.json, its start time
# (before the command: data loading counts) in $work/NAME.REPEAT.start.
run() {
  local name=$1 repeat=$2
  shift 2
  local dir="$work/$name.$repeat"
  date +%s.%N >"$dir.start"
  "$bin" "$@" --log-dir "$dir" --summary-json "$dir.json" >/dev/null
}

reference=(--ps 2 --workers 2 --hidden-units 128 --batch-size 100 --train-steps 3000)
for r in $(seq "$repeats"); do
  run reference "$r" local "${reference[@]}" --data-dir "$data"
  run compute-only "$r" single --hidden-units 128 --batch-size 100 --train-steps 3000 --data-dir "$data"
  run log-every-1000 "$r" local "${reference[@]}" --data-dir "$data" --log-every-steps 1000
  # Evaluating every 100 steps costs worker 0 time: measured apart from the throughput runs.
  run eval-every-100 "$r" local "${reference[@]}" --data-dir "$data" --eval-every-steps 100
done
run 1ps-1worker 1 local --ps 1 --workers 1 --hidden-units 128 --batch-size 100 --train-steps 3000 --data-dir "$data"
run 784-256-256-10 1 local --ps 2 --workers 2 --hidden-units 256,256 --batch-size 100 --train-steps 3000 --data-dir "$data"
run sync 1 local "${reference[@]}" --sync --data-dir "$data"
run seed-settings 1 local --ps 2 --workers 2 --hidden-units 128 --batch-size 20 --learning-rate 0.001 --train-steps 200 --data-dir "$data"

python3 - "$work" "$repeats" <<'PY'
import glob, json, os, re, statistics, sys
from datetime import datetime

work, repeats = sys.argv[1], int(sys.argv[2])

def runs(name):
    out = []
    for path in sorted(glob.glob(f"{work}/{name}.*.json")):
        summary = json.load(open(path))
        base = path[:-len(".json")]
        summary["_start"] = float(open(base + ".start").read())
        summary["_dir"] = base
        out.append(summary)
    return out

def time_to_accuracy(run, target=0.85):
    log = os.path.join(run["_dir"], "worker-0", "deploy.log")
    if not os.path.exists(log):
        return None
    for line in open(log):
        m = re.match(r"\[(.{26})\] \[worker\] Accuracy at local step \d+: ([0-9.]+)", line)
        if m and float(m.group(2)) >= target:
            at = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
            return at - run["_start"]
    return None

def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

def fmt(value, pattern):
    return "-" if value is None else pattern.format(value)

def mib(run, role):
    rss = [v for k, v in run.get("peak_rss_bytes", {}).items() if k.startswith(role)]
    return max(rss) / 2**20 if rss else None

compute = median(r["global_steps_per_s"] for r in runs("compute-only"))
header = f"{'configuration':<16}{'steps/s':>9}{'compute':>9}{'comm':>8}{'wait':>8}{'KB/step':>9}{'t(0.85)':>9}{'accuracy':>9}{'ps MiB':>8}{'wk MiB':>8}"
print(header)
print(f"{'':<16}{'':>9}{'ms/step':>9}{'ms/step':>8}{'ms/step':>8}")
for name in ["reference", "log-every-1000", "eval-every-100", "1ps-1worker", "784-256-256-10", "sync", "seed-settings"]:
    rs = runs(name)
    if not rs:
        continue
    m = lambda key: median(r.get(key) for r in rs)
    print(f"{name:<16}{fmt(m('global_steps_per_s'), '{:.0f}'):>9}"
          f"{fmt(m('compute_ms_per_step'), '{:.3f}'):>9}{fmt(m('communication_ms_per_step'), '{:.3f}'):>8}"
          f"{fmt(m('waiting_ms_per_step'), '{:.3f}'):>8}{fmt((m('bytes_per_step') or 0) / 1000, '{:.0f}'):>9}"
          f"{fmt(median(time_to_accuracy(r) for r in rs), '{:.2f} s'):>9}{fmt(m('test_accuracy'), '{:.4f}'):>9}"
          f"{fmt(median(mib(r, 'ps') for r in rs), '{:.1f}'):>8}{fmt(median(mib(r, 'worker') for r in rs), '{:.1f}'):>8}")
print(f"{'compute-only':<16}{fmt(compute, '{:.0f}'):>9}   (pstrain single: same model and batch, one process, no network)")
ref = median(r["global_steps_per_s"] for r in runs("reference"))
quiet = median(r["global_steps_per_s"] for r in runs("log-every-1000"))
print()
print(f"reference / (2 x compute-only) = {ref / (2 * compute):.2f}   (goal >= 0.6)")
print(f"logging every step costs {100 * (1 - ref / quiet):.1f}% of throughput against every 1000 steps   (goal <= 3%)")
print(f"time from start to 0.85 test accuracy (data loading included): {fmt(median(time_to_accuracy(r) for r in runs('eval-every-100')), '{:.2f} s')}   (goal <= 5 s)")
print(f"medians of {repeats} runs for reference, compute-only, log-every-1000 and eval-every-100; one run for the others")
PY
