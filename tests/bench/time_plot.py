"""An SVG plot of times against workers on a log scale, one line a series: what the
time-to-accuracy reports (workers_to_accuracy_report.py, network_report.py) draw."""
import math


def write_time_plot(path, title, workers, series, legend_width=190):
    """series: [(label, colour, dash attribute ("" for solid), [(workers, seconds), ...])]."""
    times = [t for _, _, _, line in series for _, t in line] or [1.0]
    low, high = math.log10(min(times) / 1.5), math.log10(max(times) * 1.5)
    width, height, left, bottom, top, right = 450 + legend_width, 400, 60, 50, 30, legend_width
    x = lambda w: left + (w - workers[0]) / max(1, workers[-1] - workers[0]) * (width - left - right)
    y = lambda t: height - bottom - (math.log10(t) - low) / (high - low) * (height - bottom - top)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="18">{title}</text>',
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
    for n, (label, colour, dash, line) in enumerate(series):
        if len(line) > 1:
            points = " ".join(f"{x(w):.1f},{y(t):.1f}" for w, t in line)
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for w, t in line:
            parts.append(f'<circle cx="{x(w):.1f}" cy="{y(t):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + 16 * n
        parts.append(f'<line x1="{width - right + 12}" y1="{ly}" x2="{width - right + 36}" y2="{ly}" '
                     f'stroke="{colour}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{width - right + 42}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as svg:
        svg.write("\n".join(parts) + "\n")
