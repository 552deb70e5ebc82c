"""The table and plot of tests/bench/network.sh: time to accuracy per link speed, worker count and
wire encoding, medians over rounds, each beside fp32 on the same link and the same encoding on an
unshaped one."""
import glob
import os
import sys

from accuracy_curve import curve, first_at, fmt, median, steps_to
from time_plot import write_time_plot

work, out = sys.argv[1], sys.argv[2]
runs = {}
for path in sorted(glob.glob(os.path.join(work, "*.start"))):
    base = path[:-len(".start")]
    link, workers, encoding, _ = os.path.basename(base).split(".")
    points, summary, _ = curve(base)
    runs.setdefault((link, int(workers[1:]), encoding.replace("-", "/")), []).append(
        (first_at(points, 0.85), first_at(points, 0.87), steps_to(points, 0.87),
         summary.get("test_accuracy"), summary.get("bytes_per_step")))

table = {key: [median(r[i] for r in rows) for i in range(5)] for key, rows in runs.items()}
links = sorted({k[0] for k in table}, key=lambda l: (l != "unlimited", -float(l.rstrip("gbit") or 0)
                                                     if l != "unlimited" else 0))
workers = sorted({k[1] for k in table})
encodings = sorted({k[2] for k in table}, key=lambda e: (e != "fp32/fp32", e))
rounds = max(len(rows) for rows in runs.values())


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


print(f"2 ps as `pstrain run` processes, each behind its own link; Fashion-MNIST, 784-128-10, "
      f"batch 100, sync; medians of {rounds}")
print("t: from the processes' start; bytes: per worker per step, push and pull, from the frames")
head = (f"{'link':>9} {'workers':>7} {'push/pull':>9} {'t(0.85)':>8} {'t(0.87)':>8} {'s(0.87)':>7} "
        f"{'final':>6} {'bytes':>8} {'vs fp32':>7} {'vs unshaped':>11}")
print(head)
for link in links:
    for w in workers:
        for encoding in encodings:
            v = table.get((link, w, encoding))
            if not v:
                continue
            fp32 = table.get((link, w, "fp32/fp32"), [None] * 5)
            unshaped = table.get(("unlimited", w, encoding), [None] * 5)
            print(f"{link:>9} {w:>7} {encoding:>9} {fmt(v[0], '{:.2f} s'):>8} {fmt(v[1], '{:.2f} s'):>8} "
                  f"{fmt(v[2], '{:.0f}'):>7} {fmt(v[3], '{:.4f}'):>6} {fmt(v[4], '{:,.0f}'):>8} "
                  f"{fmt(ratio(v[1], fp32[1]), '{:.2f}x'):>7} {fmt(ratio(v[1], unshaped[1]), '{:.2f}x'):>11}")


def plot():
    """t(0.87) against workers: a colour per encoding, a dash per link."""
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    dashes = {"unlimited": "", "10gbit": ' stroke-dasharray="2,3"', "1gbit": ' stroke-dasharray="6,4"'}
    series = [(f"{encoding}, {link}", colours[encodings.index(encoding) % len(colours)],
               dashes.get(link, ' stroke-dasharray="1,1"'),
               [(w, table[(link, w, encoding)][1]) for w in workers
                if (link, w, encoding) in table and table[(link, w, encoding)][1] is not None])
              for link in links for encoding in encodings]
    write_time_plot(os.path.join(out, "network.svg"),
                    "Time to 0.87 against workers, each ps behind its own link", workers, series, 230)


plot()
