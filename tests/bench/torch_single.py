#!/usr/bin/python3
"""PyTorch yardstick for `pstrain single`: the same MLP trained in one single-threaded process.

Model, data and training are pstrain's (daemon/src/model, worker/batch_sampler.cpp,
ps/optimizer.cpp): 784 -> hidden (ReLU) ... -> 10, softmax cross-entropy, one flat float32
parameter vector in pstrain's layout (per layer the weights, column-major out x in, then the
bias; He-normal hidden weights, Glorot-uniform output weights, zero biases), pixels scaled by
1/255, random batches from a fresh shuffle per epoch, torch.optim.Adam (lr 0.001, betas
0.9/0.999, eps 1e-8; it adds eps after the bias correction, pstrain before: a negligible
difference). Random numbers come from numpy, not pstrain's generator: runs match pstrain's in
distribution, not bit for bit. torch_ps.py imports the model, data and sampler from here.

Run:   /usr/bin/python3 tests/bench/torch_single.py [--train-steps 3000] [--batch-size 100]
           [--hidden-units 128] [--data-dir /usr/share/datasets/fashion-mnist] [--summary-json F]
Prints one JSON object (to stdout, or to --summary-json FILE):
  {"global_step", "test_accuracy", "training_elapsed_s", "global_steps_per_s"}
where the time counts the training loop alone, from its first step (data loading excluded).
Needs Debian's python3-torch and python3-numpy (hence /usr/bin/python3).
"""
import os

# One thread, set before torch loads its OpenMP/BLAS pools: the bound a pstrain worker is held to.
for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse
import gzip
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

INPUTS, CLASSES = 28 * 28, 10


def read_idx(directory, name):
    """An unsigned-byte IDX file `name` or `name.gz` in `directory`, as an array (items x rest)."""
    for path in (os.path.join(directory, name), os.path.join(directory, name + ".gz")):
        if os.path.exists(path):
            break
    else:
        raise ValueError(f"no {name} or {name}.gz in {directory}")
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[:3] != b"\0\0\x08":
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = data[3]
    shape = [int(d) for d in np.frombuffer(data, ">u4", dims, 4)]
    values = np.frombuffer(data, np.uint8, offset=4 + 4 * dims)
    if values.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {values.size} values, the header says {shape}")
    return values.reshape(shape[0], -1)


def load_set(directory, prefix, index=0, parts=1):
    """(images uint8 n x 784, labels int64) of the set `prefix` ("train" or "t10k"), or of the
    contiguous part `index` of `parts` as pstrain's loadTrainingSlice cuts it."""
    images = read_idx(directory, prefix + "-images-idx3-ubyte")
    labels = read_idx(directory, prefix + "-labels-idx1-ubyte").reshape(-1)
    if images.shape != (len(labels), INPUTS):
        raise ValueError(f"{directory}: {prefix} images {images.shape} do not fit "
                         f"{len(labels)} labels")
    begin, end = len(labels) * index // parts, len(labels) * (index + 1) // parts
    return (torch.from_numpy(images[begin:end].copy()),
            torch.from_numpy(labels[begin:end].astype(np.int64)))


class Mlp:
    """An MLP over one flat parameter vector in pstrain's layout."""

    def __init__(self, hidden):
        self.sizes = [INPUTS, *hidden, CLASSES]
        self.parameter_count = sum(i * o + o for i, o in zip(self.sizes, self.sizes[1:]))

    def initial_parameters(self, seed):
        rng = np.random.default_rng(seed)
        flat = np.zeros(self.parameter_count, np.float32)
        offset = 0
        for layer, (inputs, outputs) in enumerate(zip(self.sizes, self.sizes[1:])):
            count = inputs * outputs
            if layer + 2 < len(self.sizes):
                weights = rng.normal(0.0, np.sqrt(2.0 / inputs), count)
            else:
                limit = np.sqrt(6.0 / (inputs + outputs))
                weights = rng.uniform(-limit, limit, count)
            flat[offset:offset + count] = weights
            offset += count + outputs
        return torch.from_numpy(flat)

    def logits(self, flat, images):
        x = images.float().mul_(1.0 / 255.0)
        offset = 0
        for layer, (inputs, outputs) in enumerate(zip(self.sizes, self.sizes[1:])):
            # Column-major out x in is row-major in x out: x @ W needs no transpose.
            weights = flat[offset:offset + inputs * outputs].view(inputs, outputs)
            bias = flat[offset + inputs * outputs:offset + inputs * outputs + outputs]
            x = torch.addmm(bias, x, weights)
            if layer + 2 < len(self.sizes):
                x = x.relu()
            offset += inputs * outputs + outputs
        return x

    def backward(self, flat, images, labels):
        """Adds the mean cross-entropy gradient of the batch to flat.grad (flat requires grad)."""
        F.cross_entropy(self.logits(flat, images), labels).backward()

    @torch.no_grad()
    def accuracy(self, flat, images, labels, chunk=1000):
        correct = 0
        for start in range(0, len(labels), chunk):
            predicted = self.logits(flat, images[start:start + chunk]).argmax(1)
            correct += int((predicted == labels[start:start + chunk]).sum())
        return correct / len(labels)


class BatchSampler:
    """Batches of example indices: a fresh shuffle each epoch, batches straddle epochs."""

    def __init__(self, count, batch_size, seed):
        if count == 0:
            raise ValueError("no training examples to sample from")
        self.rng = np.random.default_rng(seed)
        self.order = np.arange(count)
        self.position = count
        self.batch_size = batch_size

    def next(self):
        batch = np.empty(self.batch_size, np.int64)
        filled = 0
        while filled < self.batch_size:
            if self.position == len(self.order):
                self.rng.shuffle(self.order)
                self.position = 0
            take = min(self.batch_size - filled, len(self.order) - self.position)
            batch[filled:filled + take] = self.order[self.position:self.position + take]
            filled += take
            self.position += take
        return torch.from_numpy(batch)


def adam(parameters, learning_rate):
    return torch.optim.Adam([parameters], lr=learning_rate, betas=(0.9, 0.999), eps=1e-8)


def positive_int(text):
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)


def hidden_units(text):
    return [positive_int(part) for part in text.split(",")]


def model_arguments(description):
    """The options both scripts share, named as pstrain's."""
    parser = argparse.ArgumentParser(description=description)
    # One error line, without the usage text.
    parser.error = lambda message: sys.exit(f"{parser.prog}: error: {message}")
    parser.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--train-steps", type=positive_int, default=3000)
    parser.add_argument("--batch-size", type=positive_int, default=100)
    parser.add_argument("--hidden-units", type=hidden_units, default=[128],
                        help="e.g. 128 or 256,256")
    parser.add_argument("--learning-rate", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--summary-json", help="write the summary here instead of stdout")
    return parser


def report(summary, path):
    text = json.dumps(summary, indent=2)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def main():
    args = model_arguments(__doc__.splitlines()[0]).parse_args()
    images, labels = load_set(args.data_dir, "train")
    test_images, test_labels = load_set(args.data_dir, "t10k")
    mlp = Mlp(args.hidden_units)
    flat = mlp.initial_parameters(args.seed).requires_grad_()
    optimizer = adam(flat, args.learning_rate)
    sampler = BatchSampler(len(labels), args.batch_size, args.seed + 1)

    start = time.perf_counter()
    for _ in range(args.train_steps):
        batch = sampler.next()
        optimizer.zero_grad(set_to_none=True)
        mlp.backward(flat, images[batch], labels[batch])
        optimizer.step()
    elapsed = time.perf_counter() - start

    report({"global_step": args.train_steps,
            "test_accuracy": mlp.accuracy(flat, test_images, test_labels),
            "training_elapsed_s": elapsed,
            "global_steps_per_s": args.train_steps / elapsed}, args.summary_json)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        sys.exit(f"torch_single: error: {e}")
