#!/usr/bin/env python3
"""Prints latency.sh's table from the runs it left in WORK."""
import glob
import statistics
import sys

from accuracy_curve import curve, first_at, fmt, median

work, repeats, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3]
modes = [("default", "launcher's default (async, 2 compute at once)"),
         ("sync", "every worker at once: sync"), ("async", "every worker at once: async")]
print(f"Through a fault proxy: 2 ps + 4 workers, Fashion-MNIST, batch 100, {steps} global steps; "
      f"medians of {repeats} interleaved runs")
print(f"{'configuration':46} {'delay':>5} {'in flight':>9} {'steps/s':>8} {'ratio':>6} "
      f"{'t(0.85)':>8} {'staleness':>9} {'accuracy':>8} {'final steps':>11}")
for mode, label in modes:
    base = None
    for latency, inflight in (("0", "1"), ("5", "1"), ("5", "4"), ("5", "8")):
        runs = [curve(path[:-len(".json")]) for path in
                sorted(glob.glob(f"{work}/{mode}-{latency}-{inflight}.*.json"))]
        if not runs:
            continue
        rate = median(s.get("global_steps_per_s") for _, s, _ in runs)
        base = rate if latency == "0" else base
        ratio = rate / base if base else None
        t85 = median(first_at(points, 0.85) for points, _, _ in runs)
        stale = [st for _, _, st in runs if st]
        mean = median(statistics.mean(m for m, _ in st) for st in stale) if stale else None
        accuracy = median(s.get("test_accuracy") for _, s, _ in runs)
        finals = sorted({s.get("global_step") for _, s, _ in runs})
        print(f"{label if latency == '0' else '':46} {latency + ' ms':>5} {inflight:>9} "
              f"{fmt(rate, '{:.0f}'):>8} {fmt(ratio, '{:.2f}'):>6} {fmt(t85, '{:.2f} s'):>8} "
              f"{fmt(mean, '{:.2f}'):>9} {fmt(accuracy, '{:.4f}'):>8} "
              f"{','.join(str(f) for f in finals):>11}")
