#!/usr/bin/env python3
"""Worker 0 killed inside a re-cut, beside an uninterrupted twin: test accuracy, medians.

recut_kill_test (ctest) shows that a run whose worker 0 is killed at any point of a re-cut ends
at exactly its last step with no state lost and a sound history. This measures what the model
is worth after it: `pstrain local` on Fashion-MNIST, 2 ps becoming 3 and 3 becoming 2 (SIGRTMIN,
SIGRTMIN+1 once ps 0 is at global step 300), 6,000 global steps; the twin re-cuts with no kill,
and each other run has worker 0 killed by one failpoint (PSTRAIN_FAILPOINTS, its first start
only). Runs are interleaved, REPEATS of each (default 5), and the table gives the median test
accuracy of each beside the twin's, and the difference. Two runs of the same settings differ by
up to 0.01 (the order in which the ps sum the workers' gradients, and when each worker joins),
so read medians.

    python3 tests/bench/recut_kill.py [REPEATS]
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PSTRAIN = os.path.join(ROOT, "build", "pstrain")
DATA = "/usr/share/datasets/fashion-mnist"
STEPS = 6000
KILLS = ["", "recut.after-freeze=1+1*kill", "recut.after-prepare=1+1*kill",
         "recut.after-commit=1*kill", "recut.after-commit=1+1*kill", "recut.before-report=1*kill"]


def last_step(events):
    step = 0
    try:
        with open(events) as lines:
            for line in lines:
                if '"event":"step"' in line.replace(" ", ""):
                    step = json.loads(line).get("step", step)
    except (OSError, ValueError):
        pass
    return step


def run(from_ps, to_ps, failpoints):
    """Test accuracy, and whether worker 0 was started again, of one run."""
    logs = tempfile.mkdtemp(prefix="recut-kill-")
    argv = [PSTRAIN, "local", "--ps", str(from_ps), "--workers", "2", "--sync", "true",
            "--data-dir", DATA,
            "--train-steps", str(STEPS), "--eval-every-steps", "0", "--log-dir", logs,
            "--summary-json", os.path.join(logs, "summary.json")]
    env = dict(os.environ, PSTRAIN_FAILPOINTS=failpoints)
    launcher = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    while last_step(os.path.join(logs, "ps-0", "events.jsonl")) < 300:
        if launcher.poll() is not None:
            sys.exit(f"the run in {logs} ended before global step 300")
        time.sleep(0.01)
    os.kill(launcher.pid, signal.SIGRTMIN if to_ps > from_ps else signal.SIGRTMIN + 1)
    if launcher.wait(timeout=300) != 0:
        sys.exit(f"the run in {logs} failed")
    summary = json.load(open(os.path.join(logs, "summary.json")))
    if summary["global_step"] != STEPS:
        sys.exit(f"the run in {logs} ended at global step {summary['global_step']}")
    with open(os.path.join(logs, "events.jsonl")) as events:
        restarted = any(json.loads(line).get("event") == "restarted" and
                        json.loads(line).get("child") == "worker-0" for line in events)
    subprocess.run(["rm", "-rf", logs])
    return summary["test_accuracy"], restarted


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for from_ps, to_ps in ((2, 3), (3, 2)):
        accuracy = {kill: [] for kill in KILLS}
        for _ in range(repeats):
            for kill in KILLS:
                value, restarted = run(from_ps, to_ps, kill)
                if restarted != bool(kill):
                    sys.exit(f"{kill or 'the twin'}: worker 0 {'not ' if kill else ''}killed")
                accuracy[kill].append(value)
        twin = statistics.median(accuracy[""])
        print(f"\n{from_ps} -> {to_ps} ps, {repeats} runs each, test accuracy after {STEPS} steps")
        print("| worker 0 killed | median | runs | beside the twin |")
        print("| --- | ---: | --- | ---: |")
        for kill in KILLS:
            median = statistics.median(accuracy[kill])
            runs = ", ".join(f"{a:.4f}" for a in accuracy[kill])
            print(f"| {kill or 'no (the twin)'} | {median:.4f} | {runs} | {median - twin:+.4f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
