#!/usr/bin/env python3
"""Prints bench.sh's tables from the summaries a run left in WORK (see bench.sh)."""
import glob
import json
import os
import statistics
import sys

work, repeats = sys.argv[1], int(sys.argv[2])


def runs(name):
    out = []
    for path in sorted(glob.glob(f"{work}/{name}.*.json")):
        summary = json.load(open(path))
        base = path[:-len(".json")]
        if os.path.exists(base + ".start"):
            summary["_start"] = float(open(base + ".start").read())
        summary["_dir"] = base
        out.append(summary)
    return out


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def rate(name):
    return median(r.get("global_steps_per_s") for r in runs(name))


def together(name):
    """The summed steps/s of the processes of each run of NAME (bench.sh's alone), one per run."""
    return [sum(json.load(open(path))["global_steps_per_s"] for path in glob.glob(f"{run}/*.json"))
            for run in sorted(glob.glob(f"{work}/{name}.*/"))]


def fmt(value, pattern):
    return "-" if value is None else pattern.format(value)


def time_to_accuracy(run, target=0.85):
    path = os.path.join(run["_dir"], "worker-0", "events.jsonl")
    if not os.path.exists(path):
        return None
    for line in open(path):
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a partial last line
        if event.get("event") == "accuracy" and event["accuracy"] >= target:
            # When the parameters were taken: they are evaluated later, off the training thread.
            return event.get("taken_at", event["time"]) - run["_start"]
    return None


def mib(run, role):
    rss = [v for k, v in run.get("peak_rss_bytes", {}).items() if k.startswith(role)]
    return max(rss) / 2**20 if rss else None


print("1. Named configurations (medians of %d runs for the first four, one run for the others)" % repeats)
print(f"{'configuration':<16}{'steps/s':>9}{'compute':>9}{'comm':>8}{'wait':>8}{'KB/step':>9}"
      f"{'t(0.85)':>9}{'accuracy':>9}{'ps MiB':>8}{'wk MiB':>8}")
print(f"{'':<16}{'':>9}{'ms/step':>9}{'ms/step':>8}{'ms/step':>8}")
for name in ["reference", "before-reference", "log-every-1000", "eval-every-100", "784-256-256-10", "sync", "seed-settings"]:
    rs = runs(name)
    if not rs:
        continue
    m = lambda key: median(r.get(key) for r in rs)
    print(f"{name:<16}{fmt(m('global_steps_per_s'), '{:.0f}'):>9}"
          f"{fmt(m('compute_ms_per_step'), '{:.3f}'):>9}{fmt(m('communication_ms_per_step'), '{:.3f}'):>8}"
          f"{fmt(m('waiting_ms_per_step'), '{:.3f}'):>8}{fmt((m('bytes_per_step') or 0) / 1000, '{:.0f}'):>9}"
          f"{fmt(median(time_to_accuracy(r) for r in rs), '{:.2f} s'):>9}{fmt(m('test_accuracy'), '{:.4f}'):>9}"
          f"{fmt(median(mib(r, 'ps') for r in rs), '{:.1f}'):>8}{fmt(median(mib(r, 'worker') for r in rs), '{:.1f}'):>8}")
compute = rate("compute-only")
print(f"{'compute-only':<16}{fmt(compute, '{:.0f}'):>9}   (pstrain single: same model and batch, one process, no network)")
ref, quiet = rate("reference"), rate("log-every-1000")
if ref and compute and quiet:
    print(f"reference / (2 x compute-only) = {ref / (2 * compute):.2f}   (goal >= 0.6)")
    print(f"logging every step costs {100 * (1 - ref / quiet):.1f}% of throughput against every 1000 steps   (goal <= 3%)")
print(f"time from start to 0.85 test accuracy (data loading included): "
      f"{fmt(median(time_to_accuracy(r) for r in runs('eval-every-100')), '{:.2f} s')}   (goal <= 5 s)")

print()
print(f"2. Scaling: global steps/s (test accuracy), async, 784-128-10, Adam; medians of {repeats} runs, "
      "the shapes interleaved")
shapes = ["1x1", "1x2", "1x4", "1x8", "2x4", "4x8"]
print(f"{'batch':<8}" + "".join(f"{s.replace('x', ' ps/') + ' wk':>16}" for s in shapes))
for batch in (100, 10):
    cells = []
    for shape in shapes:
        rs = runs(f"scale-b{batch}-{shape}")
        accuracy = median(r.get("test_accuracy") for r in rs)
        cells.append("-" if not rs else f"{rate(f'scale-b{batch}-{shape}'):.0f} ({accuracy:.3f})")
    print(f"{batch:<8}" + "".join(f"{c:>16}" for c in cells))
    before = [rate(f"before-scale-b{batch}-{shape}") for shape in shapes]
    if any(before):
        print(f"{'before':<8}" + "".join(f"{fmt(b, '{:.0f}'):>16}" for b in before))
    one_two, one_eight = rate(f"scale-b{batch}-1x2"), rate(f"scale-b{batch}-1x8")
    if one_two and one_eight:
        pairs = [e["global_steps_per_s"] / t["global_steps_per_s"]
                 for t, e in zip(runs(f"scale-b{batch}-1x2"), runs(f"scale-b{batch}-1x8"))]
        print(f"        1 ps: 8 workers / 2 workers = {one_eight / one_two:.2f}   (goal >= 1); "
              f"run by run: {' '.join(f'{p:.2f}' for p in pairs)}")
    two, eight = together(f"alone-b{batch}-2"), together(f"alone-b{batch}-8")
    if two and eight:
        # No ps, no network: what the cores give 8 processes against 2, the most 8 workers / 2
        # workers can reach on this machine unless the ps does less work per step for 8.
        print(f"        no ps: 8 processes / 2 processes computing at once = "
              f"{median(eight) / median(two):.2f} ({median(two):.0f} and {median(eight):.0f} steps/s); "
              f"run by run: {' '.join(f'{e / t:.2f}' for t, e in zip(two, eight))}")
compute = rate("compute-only")
if compute and rate("scale-b100-1x2"):
    # How the run's 2-worker shape fared against its compute bound: low when the VM ran slow or
    # the scheduler kept workers off the cores of the ps threads serving them, the runs where
    # 8 workers overtake 2 (docs/benchmarks.md, Measured).
    print(f"1 ps + 2 workers at batch 100 ran at {rate('scale-b100-1x2') / (2 * compute):.2f} of "
          "twice the one-process compute rate")

print()
print("3. One ps on one core: pushes/s from clients that only push (ps on core 0, clients on core 1)")
print(f"{'clients':<9}{'pushes/s':>10}{'ps CPU':>8}{'per ps CPU-s':>14}{'memory floor':>14}{'in-cache floor':>16}")
best = None
for path in sorted(glob.glob(f"{work}/capacity.*.json")):
    c = json.load(open(path))
    print(f"{c['clients']:<9}{c['pushes_per_s']:>10.0f}{100 * c['ps_cpu_share']:>7.0f}%"
          f"{c['pushes_per_ps_cpu_s']:>14.0f}{c['memory_floor_pushes_per_s']:>14.0f}"
          f"{c['in_cache_floor_pushes_per_s']:>16.0f}")
    best = c if best is None or c["pushes_per_s"] > best["pushes_per_s"] else best
if best:
    print(f"capacity / memory floor = {best['pushes_per_s'] / best['memory_floor_pushes_per_s']:.2f} "
          f"(per ps CPU-second: {best['pushes_per_ps_cpu_s'] / best['memory_floor_pushes_per_s']:.2f})"
          f"   (goal >= 0.5); against the in-cache floor: "
          f"{best['pushes_per_ps_cpu_s'] / best['in_cache_floor_pushes_per_s']:.2f} per ps CPU-second")
    print(f"optimizer step over the shard: {best['optimizer_us_per_step']:.1f} us alone, "
          f"{best['optimizer_us_per_step_8_together']:.1f} us each when 8 are applied together")

print()
print("4. Peers: the same model, batch 100, Adam, Fashion-MNIST, 3000 steps, on this machine")
print(f"{'work':<34}{'pstrain':>10}{'PyTorch':>10}{'ratio':>8}   steps/s (test accuracy)")
for label, ours, theirs, goal in [
        ("parameter server, 2 ps + 2 workers", "reference", "torch-ps-2x2", 3),
        ("parameter server, 2 ps + 8 workers", "pstrain-2x8", "torch-ps-2x8", 3),
        ("one process, one thread", "compute-only", "torch-single", 1)]:
    a, b = rate(ours), rate(theirs)
    acc = lambda n: median(r.get("test_accuracy") for r in runs(n))
    ratio = a / b if a and b else None
    print(f"{label:<34}{fmt(a, '{:.0f}'):>10}{fmt(b, '{:.0f}'):>10}{fmt(ratio, '{:.2f}'):>8}"
          f"   ({fmt(acc(ours), '{:.4f}')} / {fmt(acc(theirs), '{:.4f}')}; goal >= {goal})")

print()
plain = runs("plain")
strange = runs("strangers")
if plain and strange:
    p = median(r["training_elapsed_s"] for r in plain)
    s = median(r["training_elapsed_s"] for r in strange)
    print("5. Strangers on ps 0's port: 300 silent and 30 trickling connections held while the reference run trains")
    print(f"training time {p:.2f} s without, {s:.2f} s with: they cost {s - p:+.2f} s   (goal <= 1 s); "
          f"final global step {median(r['global_step'] for r in strange):.0f}")
    for path in sorted(glob.glob(f"{work}/strangers.*.held")):
        print("   " + open(path).read().strip())
