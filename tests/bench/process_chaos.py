#!/usr/bin/env python3
"""Seeded schedules of real faults on `pstrain local` processes, checked on the run's history.

Each seed draws a run (2 or 3 ps, 2 or 3 workers, sync or async, 6,000 global steps on
Fashion-MNIST, checkpoints every 0.5 s, --record-history) and a schedule of faults, sent to the
processes as the run goes:

  kill        SIGKILL to a child chosen at random (worker 0 and the ps among them)
  stop        SIGSTOP to a child for 0.2-1.5 s, then SIGCONT
  ps+ / ps-   a ps added or removed (SIGRTMIN, SIGRTMIN+1 to the launcher): worker 0 re-cuts
  worker+/-   a worker added or removed (SIGUSR1, SIGUSR2 to the launcher)
  stale       (with --stale) a ps's checkpoint copied aside, and 0.2-1.5 s later (its
              checkpoints written on meanwhile, every 0.5 s) the ps SIGKILLed and the copy put
              back: it starts again from a checkpoint older than its last
  partition   (with --partition) a one-way partition for 0.6-4.5 s: what one worker sends to
              one ps is dropped (iptables on a net_cls cgroup the worker's process is moved
              into), what the ps sends still reaches the worker; TCP, its segments
              unacknowledged, then stalls that connection both ways until it heals
  full-disk   (with --full-disk) the run's log dir, each seed's own tmpfs, filled for
              0.6-4.5 s: checkpoints, events, logs and history records find no room

and, through failpoints (PSTRAIN_FAILPOINTS, each child's first start only):

  recut-kill  worker 0 sends itself SIGKILL at a point of its first re-cut (after the k-th
              freeze, slice given, or commit, or before it records the re-cut)
  torn        every ps is killed between its first checkpoint's write and its rename

A seed passes when the launcher exits 0, the summary says exactly 6,000 global steps, and the
history checker (build/daemon/tests/history_check) finds no violation. Prints each seed's
outcome and a final count; exits 1 if any seed failed. Needs build/pstrain and history_check
(ci/build.sh) and Debian's dataset-fashion-mnist.

    python3 tests/bench/process_chaos.py [--stale] [--partition] [--full-disk] [FIRST [LAST]]

Seeds 1 to 200 by default. Without those flags a seed draws the schedule it drew before those
fault kinds existed. --partition and --full-disk need root (iptables, a net_cls cgroup it
mounts where none is, a tmpfs).
"""
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PSTRAIN = os.path.join(ROOT, "build", "pstrain")
CHECK = os.path.join(ROOT, "build", "daemon", "tests", "history_check")
DATA = "/usr/share/datasets/fashion-mnist"
STEPS = 6000
RECUT_SITES = ["recut.after-freeze", "recut.after-prepare", "recut.after-commit"]


NET_CLS = "/sys/fs/cgroup/net_cls"
PARTITIONED = os.path.join(NET_CLS, "pstrain-partitioned")
PARTITION_CLASS = "0x00100001"


OPTIONAL_KINDS = ["stale", "partition", "full-disk"]


def draw(seed, optional=()):
    """The run's settings, its failpoints and its schedule of (seconds, fault) for `seed`, with
    the fault kinds of OPTIONAL_KINDS named in `optional`."""
    rng = random.Random(seed)
    run = {"ps": rng.choice([2, 3]), "workers": rng.choice([2, 3]),
           "sync": rng.choice(["true", "false"])}
    failpoints = []
    if rng.random() < 0.5:
        site = rng.choice(RECUT_SITES + ["recut.before-report"])
        skip = 0 if site == "recut.before-report" else rng.randint(0, 2)
        failpoints.append(f"{site}={skip}+1*kill")
    if rng.random() < 0.3:
        failpoints.append("checkpoint.before-rename=1*kill")
    faults = []
    at = 0.3
    for _ in range(rng.randint(4, 8)):
        at += rng.uniform(0.15, 0.5)
        kind = rng.choice(["kill", "kill", "stop", "stop", "ps+", "ps-", "worker+", "worker-"]
                          + [kind for kind in OPTIONAL_KINDS if kind in optional])
        faults.append((at, kind, rng.random(), rng.uniform(0.2, 1.5)))
    return run, ";".join(failpoints), faults


def children(logs):
    """The children's log dirs: ps-N and worker-N."""
    return sorted(d for d in os.listdir(logs) if d.startswith(("ps-", "worker-")))


def started(logs, child):
    """The `started` event of the child's last start, or None."""
    event = None
    try:
        with open(os.path.join(logs, child, "events.jsonl")) as events:
            for line in events:
                if '"event":"started"' in line.replace(" ", ""):
                    try:
                        event = json.loads(line)
                    except ValueError:
                        pass  # a line a full disk cut short
    except OSError:
        return None
    return event


def pid_of(logs, child):
    """The PID of the child's last start, from its events, or None."""
    event = started(logs, child)
    return event and event.get("pid")


def port_of(logs, ps):
    """The port ps `ps` (a child's name) listens on, from its own `started` event, or None."""
    event = started(logs, ps)
    if not event:
        return None
    hosts = event["ps_hosts"].split(",")
    index = int(ps.split("-")[1])
    return int(hosts[index].rsplit(":", 1)[1]) if index < len(hosts) else None


def prepare_partitions():
    """The net_cls cgroup a partitioned worker is moved into, mounted where it is not."""
    if not os.path.exists(os.path.join(NET_CLS, "net_cls.classid")):
        os.makedirs(NET_CLS, exist_ok=True)
        subprocess.run(["mount", "-t", "cgroup", "-o", "net_cls", "net_cls", NET_CLS], check=True)
    os.makedirs(PARTITIONED, exist_ok=True)
    with open(os.path.join(PARTITIONED, "net_cls.classid"), "w") as classid:
        classid.write(PARTITION_CLASS)


def partition(pid, port, hold):
    """Drops for `hold` s what process `pid` sends to `port`, then heals. False if it is gone."""
    rule = ["OUTPUT", "-m", "cgroup", "--cgroup", PARTITION_CLASS, "-p", "tcp", "--dport",
            str(port), "-j", "DROP"]
    subprocess.run(["iptables", "-A"] + rule, check=True)
    try:
        try:
            with open(os.path.join(PARTITIONED, "cgroup.procs"), "w") as procs:
                procs.write(str(pid))  # its sockets, open ones included, take the class
        except OSError:
            return False
        time.sleep(hold)
        try:
            with open(os.path.join(NET_CLS, "cgroup.procs"), "w") as procs:
                procs.write(str(pid))
        except OSError:
            pass  # gone meanwhile
        return True
    finally:
        subprocess.run(["iptables", "-D"] + rule, check=True)


def send(pid, sig):
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False


def alive(pid):
    """Whether `pid` runs: not gone, and not a zombie waiting for the launcher to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def stale_restart(logs, child, pid, hold):
    """Kills ps `child` `hold` s after copying its checkpoint aside, and puts the copy back (by
    rename, as the ps writes it) before the launcher starts it again, 0.25 s or more later."""
    checkpoint = os.path.join(logs, child, "checkpoint.bin")
    aside = checkpoint + ".stale"
    try:
        with open(checkpoint, "rb") as source, open(aside, "wb") as copy:
            copy.write(source.read())
    except OSError:
        return False  # none written yet
    time.sleep(hold)
    if not send(pid, signal.SIGKILL):
        os.remove(aside)
        return False
    while alive(pid):  # a rename it had under way is done once it is gone
        time.sleep(0.001)
    os.replace(aside, checkpoint)
    return True


def fill(directory, hold):
    """Fills the file system of `directory` for `hold` s, then frees it."""
    filler = os.path.join(directory, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            os.posix_fallocate(fd, 0, os.statvfs(directory).f_bavail * 4096)
        except OSError:
            pass
        try:
            while True:  # what the allocation left, and what the children freed meanwhile
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        time.sleep(hold)
    finally:
        os.close(fd)
        os.remove(filler)


def run_seed(seed, optional):
    run, failpoints, faults = draw(seed, optional)
    logs = tempfile.mkdtemp(prefix=f"process-chaos-{seed}-")
    if "full-disk" in optional:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", logs], check=True)
    env = dict(os.environ, PSTRAIN_FAILPOINTS=failpoints)
    argv = [PSTRAIN, "local", "--ps", str(run["ps"]), "--workers", str(run["workers"]),
            "--sync", run["sync"], "--data-dir", DATA, "--train-steps", str(STEPS),
            "--eval-every-steps", "0", "--checkpoint-every-seconds", "0.5", "--record-history",
            "--log-dir", logs,
            "--summary-json", os.path.join(logs, "summary.json")]
    start = time.monotonic()
    with open(os.path.join(logs, "local.out"), "w") as out, \
            open(os.path.join(logs, "local.err"), "w") as err:
        launcher = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
    # The schedule counts from the children's start: the launcher takes scale signals from then
    # on (before, SIGUSR1 would end it, as it ends any process that does not take it).
    while not children(logs) and launcher.poll() is None:
        time.sleep(0.01)
    begun = time.monotonic()
    done = []
    for at, kind, pick, hold in faults:
        while time.monotonic() - begun < at and launcher.poll() is None:
            time.sleep(0.01)
        if launcher.poll() is not None:
            break
        launched = {"ps+": signal.SIGRTMIN, "ps-": signal.SIGRTMIN + 1,
                    "worker+": signal.SIGUSR1, "worker-": signal.SIGUSR2}
        if kind in launched:
            send(launcher.pid, launched[kind])
            done.append(kind)
            continue
        if kind == "full-disk":
            fill(logs, 3 * hold)
            done.append(f"full disk {3 * hold:.1f}s")
            continue
        names = children(logs)
        servers = [name for name in names if name.startswith("ps-")]
        if kind == "stale":
            names = servers
        elif kind == "partition":
            names = [name for name in names if name.startswith("worker-")]
        if not names:
            continue
        child = names[int(pick * len(names))]
        pid = pid_of(logs, child)
        if pid is None:
            continue
        if kind == "kill" and send(pid, signal.SIGKILL):
            done.append(f"kill {child}")
        elif kind == "stop" and send(pid, signal.SIGSTOP):
            time.sleep(hold)
            send(pid, signal.SIGCONT)
            done.append(f"stop {child} {hold:.1f}s")
        elif kind == "stale" and stale_restart(logs, child, pid, hold):
            done.append(f"stale {child} {hold:.1f}s")
        elif kind == "partition":
            # `pick` chose the worker; what is left of it chooses the ps.
            target = servers[int((pick * len(names)) % 1 * len(servers))] if servers else None
            port = target and port_of(logs, target)
            if port and partition(pid, port, 3 * hold):
                done.append(f"partition {child} -> {target} {3 * hold:.1f}s")
    try:
        status = launcher.wait(timeout=120)
    except subprocess.TimeoutExpired:
        launcher.kill()
        status = "timeout"
    seconds = time.monotonic() - start
    problems = []
    if status != 0:
        problems.append(f"launcher exit {status}: " + open(os.path.join(logs, "local.err")).read()[-400:])
    else:
        step = json.load(open(os.path.join(logs, "summary.json")))["global_step"]
        if step != STEPS:
            problems.append(f"ended at global step {step}, not {STEPS}")
    check = subprocess.run([CHECK, logs], capture_output=True, text=True)
    if check.returncode != 0:
        problems.append("history: " + (check.stdout.strip() or check.stderr.strip())[:1000])
    description = (f"{run['ps']} ps, {run['workers']} workers, sync {run['sync']}, "
                   f"failpoints [{failpoints}], faults [{', '.join(done)}]")
    return problems, seconds, description, logs


def main():
    args = sys.argv[1:]
    optional = [arg[2:] for arg in args if arg[2:] in OPTIONAL_KINDS]
    args = [arg for arg in args if arg[2:] not in OPTIONAL_KINDS]
    if "partition" in optional:
        prepare_partitions()
    first = int(args[0]) if args else 1
    last = int(args[1]) if len(args) > 1 else 200
    for binary in (PSTRAIN, CHECK):
        if not os.access(binary, os.X_OK):
            sys.exit(f"no {binary}: build first (ci/build.sh)")
    failed = []
    total = time.monotonic()
    for seed in range(first, last + 1):
        problems, seconds, description, logs = run_seed(seed, optional)
        if problems:
            failed.append(seed)
            print(f"seed {seed}: FAILED after {seconds:.1f} s ({description}); logs in {logs}")
            for problem in problems:
                print("    " + problem.replace("\n", "\n    "))
        else:
            print(f"seed {seed}: passed in {seconds:.1f} s ({description})")
            if "full-disk" in optional:
                subprocess.run(["umount", "--lazy", logs], check=True)  # its last child may still be exiting
            subprocess.run(["rm", "-rf", logs])
        sys.stdout.flush()
    print(f"{last - first + 1 - len(failed)} passed, {len(failed)} failed"
          + (f": seeds {' '.join(map(str, failed))}" if failed else "")
          + f"; {time.monotonic() - total:.0f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
