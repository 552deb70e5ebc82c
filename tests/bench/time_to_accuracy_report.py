#!/usr/bin/env python3
"""Prints time_to_accuracy.sh's table from the runs it left in WORK."""
import glob
import statistics
import sys

from accuracy_curve import accuracy_at, curve, first_at, fmt, median, steps_to

work, repeats = sys.argv[1], int(sys.argv[2])
targets = (0.85, 0.87)


rows = [("b100-w1", "async, batch 100, 1 worker"), ("b100-w2", "async, batch 100, 2 workers"),
        ("b100-w4", "async, batch 100, 4 workers"), ("b100-w8", "async, batch 100, 8 workers"),
        ("b100-w8-unbounded", "  8 workers, no bound"),
        ("b100-w2-sync", "sync, batch 100, 2 workers"), ("b100-w8-sync", "sync, batch 100, 8 workers"),
        ("b20-w1", "async, batch 20, 1 worker"), ("b20-w2", "async, batch 20, 2 workers"),
        ("b20-w4", "async, batch 20, 4 workers"), ("b20-w8", "async, batch 20, 8 workers"),
        ("b20-w8-unbounded", "  8 workers, no bound"),
        ("torch-w2", "PyTorch ps, batch 100, 2 workers"), ("torch-w8", "PyTorch ps, batch 100, 8 workers")]
# TTA_BASELINE's runs, each after this build's row of the same configuration.
rows = [row for name, label in rows for row in
        [(name, label)] + ([("before-" + name, "  before: " + label.strip())]
                           if name in ("b100-w2", "b100-w8", "b20-w2", "b20-w8") else [])]
print(f"Time to accuracy: 2 ps, Fashion-MNIST, 784-128-10, Adam (lr 0.001), 6000 global steps; "
      f"medians of {repeats} interleaved runs")
print(f"{'configuration':34} {'t(0.85)':>8} {'t(0.87)':>8} {'s(0.85)':>7} {'acc@3000':>8} "
      f"{'acc@6000':>8} {'steps/s':>8} {'staleness':>10} {'p99':>4}")
table = {}
for name, label in rows:
    runs = [curve(path[:-len(".json")]) for path in sorted(glob.glob(f"{work}/{name}.*.json"))]
    if not runs:
        continue
    t = [median(first_at(points, target) for points, _, _ in runs) for target in targets]
    steps85 = median(steps_to(points, targets[0]) for points, _, _ in runs)
    a3000 = median(accuracy_at(points, 3000) for points, _, _ in runs)
    a6000 = median(accuracy_at(points, 6000) for points, _, _ in runs)
    rate = median(s.get("global_steps_per_s") for _, s, _ in runs)
    stale = [st for _, _, st in runs if st]
    mean = median(statistics.mean(m for m, _ in st) for st in stale) if stale else None
    p99 = median(max(p for _, p in st) for st in stale) if stale else None
    table[name] = t[0]
    print(f"{label:34} {fmt(t[0], '{:.2f} s'):>8} {fmt(t[1], '{:.2f} s'):>8} "
          f"{fmt(steps85, '{:.0f}'):>7} {fmt(a3000, '{:.4f}'):>8} {fmt(a6000, '{:.4f}'):>8} {fmt(rate, '{:.0f}'):>8} "
          f"{fmt(mean, '{:.2f}'):>10} {fmt(p99, '{:g}'):>4}")


def ratio(a, b):
    return None if table.get(a) is None or table.get(b) is None else table[a] / table[b]


print(f"8 workers / 2 workers, time to 0.85: {fmt(ratio('b100-w8', 'b100-w2'), '{:.2f}')} at batch 100, "
      f"{fmt(ratio('b20-w8', 'b20-w2'), '{:.2f}')} at batch 20   (goal <= 1.25); "
      f"with no bound: {fmt(ratio('b100-w8-unbounded', 'b100-w2'), '{:.2f}')}, "
      f"{fmt(ratio('b20-w8-unbounded', 'b20-w2'), '{:.2f}')}")
if "before-b100-w8" in table:
    print(f"before: 8 workers / 2 workers, time to 0.85: "
          f"{fmt(ratio('before-b100-w8', 'before-b100-w2'), '{:.2f}')} at batch 100, "
          f"{fmt(ratio('before-b20-w8', 'before-b20-w2'), '{:.2f}')} at batch 20")
print(f"PyTorch / pstrain, time to 0.85: {fmt(ratio('torch-w2', 'b100-w2'), '{:.2f}')} with 2 workers, "
      f"{fmt(ratio('torch-w8', 'b100-w8'), '{:.2f}')} with 8   (goal >= 3)")
