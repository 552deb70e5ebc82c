#!/usr/bin/python3
"""PyTorch yardstick for `pstrain local`: asynchronous parameter servers over torch.distributed.rpc.

Launches P ps and W worker processes (each single-threaded, model and data from torch_single.py)
that talk TensorPipe over TCP on 127.0.0.1 only (they meet through a file in a temporary
directory, so nothing listens on another interface), and does pstrain's work the same way:
- ps i holds the contiguous slice [n*i/P, n*(i+1)/P) of the flat parameter vector (from the same
  seeded initialisation in every process) and its Adam state. It applies each pushed gradient
  slice under a lock (each applied push is one global step, none past --train-steps) and answers
  with its updated slice.
- worker j trains on the contiguous part j of W of the training set: it pulls all slices, then
  computes a batch's gradient, sends every ps its slice at once and waits for all, puts the
  answers into its parameters, until every ps reports the end. Worker 0 then pulls the final
  model and evaluates it on the test set.
Everything ends when done: the launcher ends its children by PID on a failure or after --timeout
seconds, and reports an error in one line with a non-zero exit.

Run:   /usr/bin/python3 tests/bench/torch_ps.py [--ps 2] [--workers 2] [--timeout 600]
           [the options of torch_single.py: --train-steps 3000 --batch-size 100 ...]
Prints one JSON object (to stdout, or to --summary-json FILE):
  {"global_step", "test_accuracy", "training_elapsed_s", "global_steps_per_s", "ps", "workers",
   "accuracy_curve"}
timed as pstrain does: worker 0's training loop, from its first step to the end.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import torch_single as common  # first: it makes every process single-threaded

import torch
import torch.distributed.rpc as rpc

shard = None  # the Shard of a ps process


class Shard:
    def __init__(self, parameters, learning_rate, train_steps):
        self.parameters = parameters.requires_grad_()
        self.optimizer = common.adam(self.parameters, learning_rate)
        self.train_steps = train_steps
        self.step = 0
        self.lock = threading.Lock()

    def push(self, gradient):
        with self.lock:
            if self.step < self.train_steps:
                self.parameters.grad = gradient
                self.optimizer.step()
                self.step += 1
            return self.read_locked()

    def read(self):
        with self.lock:
            return self.read_locked()

    def read_locked(self):
        # A copy: the answer is sent after the lock is released.
        return self.parameters.detach().clone(), self.step


# What workers call on a ps.
def push(gradient):
    return shard.push(gradient)


def pull():
    return shard.read()


def slice_of(parameter_count, ps, index):
    return slice(parameter_count * index // ps, parameter_count * (index + 1) // ps)


def run_ps(args, index):
    global shard
    mlp = common.Mlp(args.hidden_units)
    initial = mlp.initial_parameters(args.seed)[slice_of(mlp.parameter_count, args.ps, index)]
    shard = Shard(initial.clone(), args.learning_rate, args.train_steps)


def run_worker(args, index):
    mlp = common.Mlp(args.hidden_units)
    images, labels = common.load_set(args.data_dir, "train", index, args.workers)
    sampler = common.BatchSampler(len(labels), args.batch_size, args.seed + 1 + index)
    flat = torch.zeros(mlp.parameter_count, requires_grad=True)
    slices = [slice_of(mlp.parameter_count, args.ps, i) for i in range(args.ps)]
    steps = [0] * args.ps

    def gather(futures):
        with torch.no_grad():
            for i, future in futures.items():
                values, steps[i] = future.wait()
                flat[slices[i]] = values

    def pull_all():
        gather({i: rpc.rpc_async(f"ps{i}", pull) for i in range(args.ps)})

    pull_all()
    start = time.perf_counter()
    # Worker 0's snapshots of the parameters every --eval-every-steps global steps, evaluated
    # after training as pstrain's evaluator does off the training thread: [taken at, step, params].
    snapshots = []
    next_snapshot = 0
    while min(steps) < args.train_steps:
        if index == 0 and args.eval_every_steps and min(steps) >= next_snapshot:
            snapshots.append((time.time(), min(steps), flat.detach().clone()))
            next_snapshot = (min(steps) // args.eval_every_steps + 1) * args.eval_every_steps
        batch = sampler.next()
        flat.grad = None
        mlp.backward(flat, images[batch], labels[batch])
        gather({i: rpc.rpc_async(f"ps{i}", push, args=(flat.grad[slices[i]],))
                for i in range(args.ps) if steps[i] < args.train_steps})
    elapsed = time.perf_counter() - start

    if index == 0:
        pull_all()  # every ps has stopped: this is the final model
        test_images, test_labels = common.load_set(args.data_dir, "t10k")
        curve = [[taken, step, mlp.accuracy(params, test_images, test_labels)]
                 for taken, step, params in snapshots]
        with open(args.result, "w") as f:
            json.dump({"global_step": min(steps),
                       "accuracy_curve": curve,
                       "test_accuracy": mlp.accuracy(flat, test_images, test_labels),
                       "training_elapsed_s": elapsed,
                       "global_steps_per_s": min(steps) / elapsed,
                       "ps": args.ps, "workers": args.workers}, f)


def run_child(args):
    """One ps or worker: joins the RPC group, does its part, leaves once all have done theirs."""
    name = f"{args.role}{args.index}"
    rank = args.index if args.role == "ps" else args.ps + args.index
    os.environ["TP_SOCKET_IFNAME"] = "lo"  # TensorPipe listens on the loopback interface only
    options = rpc.TensorPipeRpcBackendOptions(
        # A file rendezvous: torch's TCP store would listen on every interface.
        init_method=f"file://{args.store}", rpc_timeout=args.timeout,
        # A ps serves every worker at once; a worker only waits for answers.
        num_worker_threads=args.workers + 1 if args.role == "ps" else 2,
        # TCP as pstrain's, not shared memory, which would only ever work on one host.
        _transports=["uv"], _channels=["basic"])
    if args.role == "ps":
        run_ps(args, args.index)  # ready before any worker can call it
    rpc.init_rpc(name, rank=rank, world_size=args.ps + args.workers, rpc_backend_options=options)
    if args.role == "worker":
        run_worker(args, args.index)
    rpc.shutdown()  # waits for every process, so a ps serves until the last worker is done


def launch(args):
    """Starts the ps and workers, waits for all (at most --timeout s), returns the summary."""
    mlp = common.Mlp(args.hidden_units)
    if args.ps > mlp.parameter_count:
        raise ValueError(f"{args.ps} ps for {mlp.parameter_count} parameters")
    # Bad data fails here, in one line, not in every child.
    examples = len(common.load_set(args.data_dir, "train")[1])
    common.load_set(args.data_dir, "t10k")
    if args.workers > examples:
        raise ValueError(f"{args.workers} workers for {examples} training examples")
    work = tempfile.mkdtemp(prefix="torch_ps.")
    result = os.path.join(work, "result.json")
    children = []
    try:
        for role, count in (("ps", args.ps), ("worker", args.workers)):
            for index in range(count):
                log = open(os.path.join(work, f"{role}{index}.log"), "w+")
                command = [sys.executable, os.path.abspath(__file__), *sys.argv[1:],
                           "--role", role, "--index", str(index),
                           "--store", os.path.join(work, "store"), "--result", result]
                children.append((f"{role}{index}", log, subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)))
        deadline = time.monotonic() + args.timeout
        while True:
            codes = [process.poll() for _, _, process in children]
            for (name, log, _), code in zip(children, codes):
                if code:
                    log.seek(0)
                    lines = log.read().strip().splitlines() or ["no output"]
                    how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
                    raise RuntimeError(f"{name} {how}: {lines[-1]}")
            if None not in codes:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"not done after {args.timeout} s")
            time.sleep(0.1)  # polls the children's exit; there is no wait for any of several
        with open(result) as f:
            return json.load(f)
    finally:
        for _, log, process in children:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()
        shutil.rmtree(work)


def main():
    parser = common.model_arguments(__doc__.splitlines()[0])
    parser.add_argument("--ps", type=common.positive_int, default=2)
    parser.add_argument("--workers", type=common.positive_int, default=2)
    parser.add_argument("--eval-every-steps", type=int, default=0,
                        help="worker 0 snapshots the parameters every N global steps; the result's "
                        "accuracy_curve has their test accuracy: [unix time taken, global step, "
                        "accuracy]")
    parser.add_argument("--timeout", type=common.positive_int, default=600,
                        help="seconds the whole run may take")
    for internal in ("--role", "--index", "--store", "--result"):  # set by the launcher
        parser.add_argument(internal, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role is None:
        common.report(launch(args), args.summary_json)
        return
    args.index = int(args.index)
    try:
        run_child(args)
    except BaseException as e:
        # One line, then out at once: a graceful rpc.shutdown() would wait for the others.
        print(f"{type(e).__name__}: {e}".replace("\n", " "), flush=True)
        os._exit(1)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, RuntimeError) as e:
        sys.exit(f"torch_ps: error: {e}")
