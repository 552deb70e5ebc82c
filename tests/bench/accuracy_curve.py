"""The accuracy curve of a benchmark run, read from what it left: pstrain's worker 0 events (and
the ps' staleness events), or the PyTorch peer's summary. Shared by the time-to-accuracy reports."""
import glob
import json
import os
import statistics


def curve(base):
    """[(seconds since the command started, global step, accuracy)] of one run, by step."""
    start = float(open(base + ".start").read())
    summary = json.load(open(base + ".json"))
    if "accuracy_curve" in summary:  # the PyTorch peer
        return [(t - start, step, a) for t, step, a in summary["accuracy_curve"]], summary, None
    points = []
    for line in open(os.path.join(base, "worker-0", "events.jsonl")):
        event = json.loads(line)
        if event["event"] == "accuracy":
            # When the parameters were taken: taken_at (takenAt in builds before snapshots were
            # recorded in snake_case; the event's own time in builds that evaluated on the
            # training thread, whose accuracy events say neither).
            taken = event.get("taken_at", event.get("takenAt", event["time"]))
            points.append((taken - start, event["step"], event["accuracy"]))
    staleness = []
    for path in glob.glob(os.path.join(base, "ps-*", "events.jsonl")):
        for line in open(path):
            event = json.loads(line)
            if event["event"] == "staleness":
                staleness.append((event["mean"], event["p99"]))
    return sorted(points, key=lambda p: p[1]), summary, staleness


def first_at(points, target):
    return next((t for t, _, a in points if a >= target), None)


def steps_to(points, target):
    return next((s for _, s, a in points if a >= target), None)


def accuracy_at(points, step):
    """The accuracy of the first snapshot at or after `step` (the final one for the last step)."""
    return next((a for _, s, a in points if s >= step), points[-1][2] if points else None)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, pattern):
    return "-" if value is None else pattern.format(value)
