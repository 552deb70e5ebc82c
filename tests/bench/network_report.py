"""The table and plot of tests/bench/network.sh: time to accuracy per link speed, worker count and
wire encoding, medians over rounds, each beside fp32 on the same link and the same encoding on an
unshaped one."""
import glob
import math
import os
import sys

from accuracy_curve import curve, first_at, fmt, median, steps_to

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
    """t(0.87) against workers: a line per link and encoding."""
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    dashes = {"unlimited": "", "10gbit": ' stroke-dasharray="2,3"', "1gbit": ' stroke-dasharray="6,4"'}
    series = [(link, encoding) for link in links for encoding in encodings]
    points = {s: [(w, table[(s[0], w, s[1])][1]) for w in workers
                  if (s[0], w, s[1]) in table and table[(s[0], w, s[1])][1] is not None] for s in series}
    times = [t for line in points.values() for _, t in line] or [1.0]
    low, high = math.log10(min(times) / 1.3), math.log10(max(times) * 1.3)
    width, height, left, bottom, top, right = 680, 420, 60, 50, 30, 230
    x = lambda w: left + (w - workers[0]) / max(1, workers[-1] - workers[0]) * (width - left - right)
    y = lambda t: height - bottom - (math.log10(t) - low) / (high - low) * (height - bottom - top)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="18">Time to 0.87 against workers, each ps behind its own link</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
             f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">workers</text>',
             f'<text x="14" y="{(top + height - bottom) / 2}" transform="rotate(-90 14 {(top + height - bottom) / 2})" '
             f'text-anchor="middle">seconds (log scale)</text>']
    for w in workers:
        parts.append(f'<text x="{x(w):.1f}" y="{height - bottom + 16}" text-anchor="middle">{w}</text>')
    ticks = [m * 10 ** e for e in range(math.floor(low), math.ceil(high) + 1) for m in (1, 2, 5)]
    for t in (t for t in ticks if low <= math.log10(t) <= high):
        parts.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
        parts.append(f'<line x1="{left}" y1="{y(t):.1f}" x2="{width - right}" y2="{y(t):.1f}" stroke="#ddd"/>')
    for n, (link, encoding) in enumerate(series):
        colour = colours[encodings.index(encoding) % len(colours)]
        dash = dashes.get(link, ' stroke-dasharray="1,1"')
        line = points[(link, encoding)]
        if len(line) > 1:
            path = " ".join(f"{x(w):.1f},{y(t):.1f}" for w, t in line)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for w, t in line:
            parts.append(f'<circle cx="{x(w):.1f}" cy="{y(t):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + 16 * n
        parts.append(f'<line x1="{width - right + 12}" y1="{ly}" x2="{width - right + 36}" y2="{ly}" '
                     f'stroke="{colour}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{width - right + 42}" y="{ly + 4}">{encoding}, {link}</text>')
    parts.append("</svg>")
    with open(os.path.join(out, "network.svg"), "w") as svg:
        svg.write("\n".join(parts) + "\n")


plot()
