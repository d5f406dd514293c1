#!/usr/bin/python3
"""Record real per-worker gradients as a trace for the simulator's --grad-file.

One process plays P data-parallel workers.  Each iteration every worker computes
the gradient of the loss on its own mini-batch shard; the dense average of the P
gradients is applied with SGD (momentum 0.9), so the model really trains.  For the
chosen iterations every worker's gradient, flattened in model.parameters() order,
is appended to DIR/grads.npy, a float32 array of shape (I, P, n) that is streamed
to disk one iteration at a time.  DIR/layers.json describes the run: the layer
table (name, offset, size, shape of every parameter tensor), the recorded
iterations, the training loss of every iteration and the test metrics.

Models (train_tasks.py), after the three families of the sparse-allreduce papers:
  cnn          a small VGG-like convnet (3x3 convolutions, batch norm, two
               max-pools, two fully connected layers) on scikit-learn's bundled
               8x8 digits, with random one-pixel shifts as augmentation
  lstm         a character-level LSTM language model on the licence texts in
               /usr/share/common-licenses
  transformer  a BERT-like encoder trained by masked-token prediction on the
               same texts, with word-level tokens and the output projection
               tied to the token embedding

Needs python3-torch, python3-sklearn and python3-numpy (Debian 12).
Exit status: 0 success, 1 the run failed, 2 bad input (one line on stderr).
"""

import argparse
import json
import math
import os
import re
import struct
import sys
import time

from train_tasks import (DEFAULTS, LICENSE_DIR, LSTM_SEQ, MAX_GRAD_NORM, MOMENTUM, TASKS, WARMUP, UsageError,
                         apply_update, command_main, layer_table, task_args, worker_gradients)

import numpy as np
import torch

PROG = "record_gradients.py"
DEFAULT_RECORD = "50-81,200-231"


# ---------------------------------------------------------------------------
# Streaming .npy writer

class NpyStream:
    """A float32 C-order .npy file (format 1.0) written one block at a time.

    The header carries the final shape; blocks are appended along the first
    axis and finish() checks that exactly the announced number arrived.
    """

    def __init__(self, f, shape):
        self.f = f
        self.shape = tuple(int(s) for s in shape)
        self.block = self.shape[1:]
        self.written = 0
        header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % repr(self.shape)
        # 6 bytes of magic, 2 of version, 2 of header length, the header and its '\n':
        # padded with spaces so that the data starts at a multiple of 64 bytes.
        header += " " * (-(10 + len(header) + 1) % 64) + "\n"
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))

    def append(self, block):
        if block.shape != self.block or block.dtype != np.dtype("<f4") or not block.flags.c_contiguous:
            raise ValueError(f"block {block.shape} {block.dtype} does not fit {self.shape}")
        if self.written == self.shape[0]:
            raise ValueError("more blocks than the header announced")
        self.f.write(block.data)
        self.written += 1

    def finish(self):
        if self.written != self.shape[0]:
            raise ValueError(f"{self.written} blocks written, the header announced {self.shape[0]}")
        self.f.flush()
        os.fsync(self.f.fileno())


# ---------------------------------------------------------------------------
# Command line

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse_record(text, iters):
    """'50-81,200-231' -> sorted iterations; each below iters."""
    chosen = set()
    for item in text.split(","):
        item = item.strip()
        match = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", item)
        if not match:
            raise UsageError(f"--record: '{item}' is neither an iteration nor a range A-B")
        first = int(match[1])
        last = int(match[2]) if match[2] is not None else first
        if last < first:
            raise UsageError(f"--record: range {item} ends before it starts")
        if last >= iters:
            raise UsageError(f"--record: iteration {last} is beyond --iters {iters} (iterations are 0..{iters - 1})")
        chosen.update(range(first, last + 1))
    return sorted(chosen)


def default_record(iters):
    """The default ranges, cut at --iters; an error if nothing is left."""
    chosen = [i for i in parse_record(DEFAULT_RECORD, 1 << 62) if i < iters]
    if not chosen:
        raise UsageError(f"the default --record {DEFAULT_RECORD} has no iteration below --iters {iters}; give --record")
    return chosen


def parse_args(argv):
    sizes = ", ".join(f"{m}: batch {d['batch']}, lr {d['lr']}" for m, d in DEFAULTS.items())
    parser = Parser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model with P data-parallel workers in one process and record every\n"
                    "worker's flattened gradient, for chosen iterations, as DIR/grads.npy\n"
                    "(float32, shape (I, P, n)), with DIR/layers.json describing it.",
        epilog=f"""models:
  cnn          small VGG-like convnet on scikit-learn's 8x8 digits, random one-pixel
               shifts; --batch images per worker
  lstm         character-level LSTM language model on {LICENSE_DIR};
               --batch sequences of {LSTM_SEQ} characters per worker
  transformer  BERT-like encoder, masked-token prediction (15%, 80/10/10) on the same
               texts, word tokens, output projection tied to the token embedding;
               --batch sequences per worker

defaults per model: {sizes}.
SGD with momentum {MOMENTUM} on the averaged gradient; for lstm and transformer the averaged
gradient is clipped to norm {MAX_GRAD_NORM}, and the transformer warms its learning rate up
over {WARMUP} iterations.  The recorded gradients are the workers' own, unclipped.

outputs in DIR (written under a temporary name, renamed at the end):
  grads.npy    float32, C order, shape (I, P, n): I recorded iterations, P workers,
               n parameters in model.parameters() order
  layers.json  layer table (name, offset, size, shape), recorded iterations, the
               training loss of every iteration, test metrics, wall time

exit status: 0 success, 1 the run failed, 2 bad input (one line on stderr).""")
    parser.add_argument("--model", required=True, choices=sorted(TASKS), help="model family (see below)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (created if missing)")
    parser.add_argument("--workers", type=int, default=8, metavar="P", help="data-parallel workers (default 8)")
    parser.add_argument("--iters", type=int, default=300, help="training iterations (default 300)")
    parser.add_argument("--record", metavar="LIST",
                        help="iterations to record, 0-based, as a comma-separated list of numbers and "
                             f"inclusive ranges A-B, each below --iters (default {DEFAULT_RECORD}, "
                             "cut at --iters)")
    parser.add_argument("--batch", type=int, metavar="B", help="mini-batch per worker (default per model)")
    parser.add_argument("--lr", type=float, help="learning rate (default per model)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the model, the data order and dropout (default 1)")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads for torch (default 2)")
    parser.add_argument("--size", choices=["tiny", "small", "default"], default="default",
                        help="model size: tiny (a few thousand parameters, for tests), small, default "
                             "(100k-300k parameters)")
    args = parser.parse_args(argv)

    for name in ("workers", "iters", "threads"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name} must be at least 1")
    task_args(args)
    args.record = parse_record(args.record, args.iters) if args.record is not None else default_record(args.iters)
    return args


# ---------------------------------------------------------------------------
# Training

def train(task, args, stream, log):
    """Run all iterations; returns the mean training loss of each one."""
    model = task.model
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    grads = torch.zeros(args.workers, n)
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=MOMENTUM)
    recorded = set(args.record)
    losses = []
    start = time.monotonic()
    for it in range(args.iters):
        mean_loss = worker_gradients(task, model, params, grads, args.batch, it)
        losses.append(mean_loss)
        if it in recorded:
            stream.append(grads.numpy())

        apply_update(task, optimizer, params, grads.mean(0), it, args.lr)

        if it % 50 == 0 or it == args.iters - 1:
            log(f"iteration {it:5d}  loss {mean_loss:.4f}  ({time.monotonic() - start:.1f} s)")
    return losses


def remove_quietly(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def run(args, log):
    started = time.monotonic()
    cpu_started = time.process_time()
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: {e.strerror}") from e
    final_grads = os.path.join(args.out, "grads.npy")
    final_layers = os.path.join(args.out, "layers.json")
    tmp_grads = os.path.join(args.out, f".grads.npy.{os.getpid()}.part")
    tmp_layers = os.path.join(args.out, f".layers.json.{os.getpid()}.part")
    try:
        grads_file = open(tmp_grads, "xb")
    except OSError as e:
        raise UsageError(f"--out {args.out}: cannot write there: {e.strerror}") from e

    try:
        with grads_file:
            torch.manual_seed(args.seed)
            task = TASKS[args.model](args.size, np.random.default_rng(args.seed))
            model = task.model
            layers = layer_table(model)
            n = sum(layer["size"] for layer in layers)
            shape = (len(args.record), args.workers, n)
            log(f"{args.model} ({args.size}): {n} parameters in {len(layers)} tensors; {args.workers} workers x "
                f"batch {args.batch}; {args.iters} iterations; recording {len(args.record)} "
                f"({4 * math.prod(shape) / 2**20:.1f} MiB)")
            model.eval()
            test_start = task.evaluate()
            log("test at start: " + ", ".join(f"{k} {v:.4f}" for k, v in test_start.items()))
            data = task.describe()
            if "test_unigram_loss" in data:
                log(f"test loss of the training text's token frequencies: {data['test_unigram_loss']:.4f}")

            stream = NpyStream(grads_file, shape)
            train_started = time.monotonic()
            losses = train(task, args, stream, log)
            train_seconds = time.monotonic() - train_started
            stream.finish()

        model.eval()
        test_end = task.evaluate()
        log("test at end:   " + ", ".join(f"{k} {v:.4f}" for k, v in test_end.items()))
        wall = time.monotonic() - started
        summary = {
            "model": args.model, "size": args.size, "n": n, "workers": args.workers,
            "iterations": args.record, "layers": layers,
            "seed": args.seed, "batch": args.batch, "lr": args.lr, "momentum": MOMENTUM,
            "grad_clip": task.grad_clip, "warmup": task.warmup,
            "iters": args.iters, "threads": args.threads, "data": data,
            "loss": losses, "test_start": test_start, "test_end": test_end,
            "train_seconds": round(train_seconds, 3), "wall_seconds": round(wall, 3),
            "cpu_seconds": round(time.process_time() - cpu_started, 3),
            "grads": {"file": "grads.npy", "dtype": "float32", "shape": list(shape)},
        }
        with open(tmp_layers, "x") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
        os.replace(tmp_layers, final_layers)
        os.replace(tmp_grads, final_grads)
        log(f"wrote {final_grads} and {final_layers} in {wall:.1f} s")
    finally:
        remove_quietly(tmp_grads)
        remove_quietly(tmp_layers)


def main(argv):
    return command_main(PROG, argv, parse_args, run, lambda args: (lambda line: print(line, flush=True)),
                        "; no output written")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
