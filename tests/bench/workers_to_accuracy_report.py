#!/usr/bin/env python3
"""Prints workers_to_accuracy.sh's table from the runs it left in WORK and writes its SVG plot."""
import glob
import sys

from accuracy_curve import accuracy_at, curve, first_at, fmt, median, steps_to
from time_plot import write_time_plot

work, repeats, cpus, svg_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[5]
workers = [int(w) for w in sys.argv[4].split()]
targets = (0.85, 0.87)


def runs(name):
    return [curve(path[:-len(".json")]) for path in sorted(glob.glob(f"{work}/{name}.*.json"))]


def row(name):
    """Medians over the repeats: t(0.85), t(0.87), s(0.85), s(0.87), final accuracy, steps/s, mode."""
    found = runs(name)
    if not found:
        return None
    times = [median(first_at(points, t) for points, _, _ in found) for t in targets]
    steps = [median(steps_to(points, t) for points, _, _ in found) for t in targets]
    final = median(accuracy_at(points, 10**12) for points, _, _ in found)
    rate = median(summary.get("global_steps_per_s") for _, summary, _ in found)
    return times + steps + [final, rate]


print(f"Workers to accuracy: 2 ps, Fashion-MNIST, 784-128-10, Adam (lr 0.001), batch 100, "
      f"{cpus} CPUs; medians of {repeats} interleaved runs")
print(f"{'configuration':36} {'t(0.85)':>8} {'t(0.87)':>8} {'s(0.85)':>7} {'s(0.87)':>7} "
      f"{'final':>7} {'steps/s':>8}")
table = {}
for w in workers:
    mode = "sync" if w + 2 <= cpus else f"async, {cpus} at once"  # a CPU for every process
    plural = "s" if w > 1 else ""
    for name, label in ((f"defaults-w{w}", f"pstrain, {w} worker{plural} ({mode})"),
                        (f"together-w{w}", "  all at once (sync)"),
                        (f"torch-w{w}", f"PyTorch ps, {w} worker{plural}")):
        values = row(name)
        if values is None:
            continue
        table[name] = values
        t85, t87, s85, s87, final, rate = values
        print(f"{label:36} {fmt(t85, '{:.2f} s'):>8} {fmt(t87, '{:.2f} s'):>8} "
              f"{fmt(s85, '{:.0f}'):>7} {fmt(s87, '{:.0f}'):>7} {fmt(final, '{:.4f}'):>7} "
              f"{fmt(rate, '{:.0f}'):>8}")


def ratio(a, b, column):
    x, y = table.get(a), table.get(b)
    return None if not x or not y or x[column] is None or y[column] is None else x[column] / y[column]


for w in workers[1:]:
    print(f"{w} workers / 1 worker, time to 0.85: {fmt(ratio(f'defaults-w{w}', 'defaults-w1', 0), '{:.2f}')}, "
          f"to 0.87: {fmt(ratio(f'defaults-w{w}', 'defaults-w1', 1), '{:.2f}')}; "
          f"PyTorch / pstrain, time to 0.85: {fmt(ratio(f'torch-w{w}', f'defaults-w{w}', 0), '{:.2f}')}")
values_rows = {w: row(f"values-w{w}") for w in (1, 12)}
if all(values_rows.values()):
    print(f"values.yml's settings (batch 20, 200 global steps), accuracy at the end: "
          f"1 worker {values_rows[1][4]:.4f}, 12 workers all at once {values_rows[12][4]:.4f}")


def plot():
    """t(0.85) and t(0.87) against workers, pstrain's defaults and the PyTorch peer."""
    series = [("defaults", 0, "#1f77b4", "pstrain, t(0.85)"), ("defaults", 1, "#1f77b4", "pstrain, t(0.87)"),
              ("torch", 0, "#d62728", "PyTorch ps, t(0.85)"), ("torch", 1, "#d62728", "PyTorch ps, t(0.87)")]
    write_time_plot(svg_path, f"Time to accuracy against workers, {cpus} CPUs", workers,
                    [(label, colour, ' stroke-dasharray="5,4"' if column == 1 else "",
                      [(w, table[f"{prefix}-w{w}"][column]) for w in workers
                       if f"{prefix}-w{w}" in table and table[f"{prefix}-w{w}"][column] is not None])
                     for prefix, column, colour, label in series])


plot()
