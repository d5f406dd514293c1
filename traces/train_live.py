#!/usr/bin/python3
"""Closed-loop training: a real model trained with sparsim's own aggregation.

One process plays P data-parallel workers (the models, data and SGD step of
train_tasks.py, as the gradient recorder uses them).  Each iteration every
worker computes the gradient of its own shard; the P gradients go to a running
`sparsim run --grad-live FD` over a socket pair; sparsim's algorithm, the same C
code every other run uses, in exact mode, with its own error feedback and
residuals, returns the global result; that result over P is the update the
optimizer applies before the next iteration's gradients are computed.  No
aggregation or error feedback happens in Python.

The training's clock is simulated: each iteration costs the model's compute
(its forward FLOPs per sample, counted here, x 3 x the batch over --device's
sustained FLOP/s, as sparsim's --train-flops prices it; or --compute seconds)
plus the allreduce as sparsim simulated it on --platform (selection kernels
and messages: summary.json's time of that iteration).  With several
platforms one sparsim runs per platform on the same gradients: an algorithm's
result does not depend on the network (checked each iteration, bit for bit),
so one training gives every platform's clock.

Outputs in DIR:
  curves.csv    one row per algorithm, platform and iteration: the loss of the
                workers' batches, compute, allreduce and clock seconds, the
                bytes the allreduce moved, and the test metrics after every
                E-th update
  summary.json  the configuration, the metric and its target, and per
                algorithm the loss of every iteration, every evaluation, the
                final metrics, the iterations to reach the
                target and, per platform, mean times and volume, the time to
                reach the target and the ratios to the ring run
  sim/PLATFORM/ALGO/  sparsim's own outputs (summary.json) of each run
  accuracy.png  with --plot: loss and metric against simulated time (on the
                first platform) and against iterations
                (notebooks/plot_accuracy.py)

Exit status: 0 success, 1 the run failed, 2 bad input (one line on stderr).
"""

import argparse
import copy
import csv
import json
import math
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

from train_tasks import (DEFAULTS, MOMENTUM, SIZES, TASKS, RunFailed, UsageError, apply_update, command_main,
                         task_args, worker_gradients)

import numpy as np
import torch
import torch.nn as nn

PROG = "train_live.py"
TAG_GRAD = 0x44415247   # "GRAD" as a little-endian u32: traces/live.c
TAG_RSLT = 0x544C5352   # "RSLT"
HERE = os.path.dirname(os.path.abspath(__file__))

# The metric each family's target is set on, and whether more is better.
METRIC = {"cnn": ("test_accuracy", True), "lstm": ("test_bits_per_char", False),
          "transformer": ("test_masked_accuracy", True)}
# The default target: the dense run's final metric, given up by this share
# (2%, a chosen margin: the curves' last evaluations wander by about that much).
TARGET_MARGIN = 0.02
# The run every default target comes from: `--algo all` runs it first.
TARGET_ALGO = "ring"


# ---------------------------------------------------------------------------
# The model's compute: forward FLOPs per sample

def forward_flops(task, batch):
    """Forward FLOPs of one sample: multiply-adds x 2 of the convolutions, linear
    layers, LSTM gates, attention (projections, scores, weighted sums) and the tied
    output projection, counted on one shard; element-wise work is left out (an
    approximation that undercounts by a few percent).  Counting runs on a copy of
    the task and puts torch's generator back, so it changes nothing of the run."""
    from train_tasks import MaskedLm
    probe = copy.deepcopy(task)          # its own model, data order and generator: the task's stay as they were
    torch_state = torch.get_rng_state()  # dropout draws from torch's generator
    total = [0]

    def hook(module, inputs, output):
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            total[0] += 2 * output.numel() * module.in_channels // module.groups * kh * kw
        elif isinstance(module, nn.Linear):
            total[0] += 2 * module.in_features * output.numel()
        elif isinstance(module, nn.LSTM):
            x = inputs[0]
            steps = x.shape[0] * x.shape[1]
            size_in = module.input_size
            for _ in range(module.num_layers):
                total[0] += 2 * 4 * module.hidden_size * (size_in + module.hidden_size) * steps
                size_in = module.hidden_size
        elif isinstance(module, nn.MultiheadAttention):
            q = inputs[0]
            rows, length, dim = q.shape if module.batch_first else (q.shape[1], q.shape[0], q.shape[2])
            total[0] += rows * (2 * 4 * length * dim * dim + 2 * 2 * length * length * dim)
        elif isinstance(module, MaskedLm):
            total[0] += 2 * output.shape[0] * module.tokens.weight.numel()

    handles = [m.register_forward_hook(hook) for m in probe.model.modules()]
    try:
        shard = probe.draw(1, batch)[0]
        with torch.no_grad():
            probe.model.train()   # the same path training takes (no fused inference kernels)
            probe.loss(shard)
    finally:
        for h in handles:
            h.remove()
        torch.set_rng_state(torch_state)
    return total[0] / batch


# ---------------------------------------------------------------------------
# sparsim as the aggregator

class SparsimAggregator:
    """One `sparsim run --grad-live` of one algorithm: gradients in, results out."""

    def __init__(self, sparsim, algo, platform, args, n, out):
        self.n, self.ranks, self.out = n, args.ranks, out
        ours, theirs = socket.socketpair()
        self.sock = ours
        cmd = [sparsim, "run", "--algo", algo, "--ranks", str(args.ranks), "--n", str(n),
               "--iters", str(args.iters), "--density", repr(args.density), "--platform", platform,
               "--device", args.device, "--seed", str(args.seed), "--payload", "exact",
               "--grad-live", str(theirs.fileno()), "--out", out, "--quiet", "--no-csv", "--no-trace",
               "--batch", str(args.batch)]
        cmd += ["--train-compute", repr(args.compute)] if args.compute else ["--train-flops", repr(args.flops)]
        cmd += args.sparsim_args
        self.cmd = cmd
        self.err = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(cmd, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=self.err)
        except OSError as e:
            raise UsageError(f"--sparsim {sparsim}: {e.strerror}") from e
        finally:
            theirs.close()
        try:
            hello = self._line()
            want = f"sparsim-live 1 n={n} ranks={args.ranks} iters={args.iters}"
            if hello != want:
                raise RunFailed(f"sparsim said '{hello}' where '{want}' belongs")
        except BaseException:
            self.abandon()
            raise

    def _failure(self):
        """sparsim's own line, and its status, once it has ended."""
        try:
            status = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
        self.err.seek(0)
        lines = [l for l in self.err.read().decode(errors="replace").splitlines() if l.strip()]
        msg = lines[-1] if lines else f"sparsim ended with status {status}"
        return (UsageError if status == 2 else RunFailed)(msg)

    def _recv(self, count):
        buf = bytearray()
        while len(buf) < count:
            chunk = self.sock.recv(min(count - len(buf), 1 << 20))
            if not chunk:
                raise self._failure()
            buf += chunk
        return bytes(buf)

    def _line(self):
        buf = bytearray()
        while not buf.endswith(b"\n"):
            chunk = self.sock.recv(1)
            if not chunk:
                raise self._failure()
            buf += chunk
            if len(buf) > 200:
                raise RunFailed("sparsim's hello on --grad-live is too long")
        return buf.decode().strip()

    def __call__(self, it, grads):
        """The global result of iteration `it` for the P x n gradients `grads`."""
        try:
            self.sock.sendall(struct.pack("<II", TAG_GRAD, it) + grads.numpy().tobytes())
        except (BrokenPipeError, ConnectionResetError):
            raise self._failure() from None
        tag, at = struct.unpack("<II", self._recv(8))
        if tag != TAG_RSLT or at != it:
            raise RunFailed(f"sparsim sent block (tag {tag:08x}, iteration {at}) for the result of iteration {it}")
        return torch.from_numpy(np.frombuffer(self._recv(4 * self.n), dtype="<f4").copy())

    def finish(self):
        """Waits for sparsim to write its summary; returns it."""
        self.sock.close()
        status = self.proc.wait()
        if status != 0:
            raise self._failure()
        self.err.close()
        with open(os.path.join(self.out, "summary.json")) as f:
            return json.load(f)

    def abandon(self):
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.err.close()


class Aggregators:
    """One sparsim per platform on the same gradients; their results must agree."""

    def __init__(self, runs):
        self.runs = runs

    def __call__(self, it, grads):
        results = [r(it, grads) for r in self.runs]
        for r, res in zip(self.runs[1:], results[1:]):
            if not torch.equal(res, results[0]):
                raise RunFailed(f"the result of iteration {it} differs between platforms ({r.cmd[r.cmd.index('--platform') + 1]})")
        return results[0]

    def finish(self):
        return [r.finish() for r in self.runs]

    def abandon(self):
        for r in self.runs:
            r.abandon()


# ---------------------------------------------------------------------------
# Training

def train(task, args, aggregate, log=lambda line: None):
    """Trains for args.iters iterations; aggregate(it, grads) returns the global
    result of the P x n worker gradients (their sum, for a dense allreduce).
    Returns (losses, evaluations): evaluations is a list of (iterations done,
    metrics), starting with (0, metrics before training)."""
    model = task.model
    params = list(model.parameters())
    n = sum(p.numel() for p in params)
    grads = torch.zeros(args.ranks, n)
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=MOMENTUM)
    model.eval()
    evaluations = [(0, task.evaluate())]
    losses = []
    for it in range(args.iters):
        mean_loss = worker_gradients(task, model, params, grads, args.batch, it)
        losses.append(mean_loss)
        result = aggregate(it, grads)
        apply_update(task, optimizer, params, result / args.ranks, it, args.lr)
        if (it + 1) % args.eval_every == 0 or it == args.iters - 1:
            model.eval()
            evaluations.append((it + 1, task.evaluate()))
            log(f"  iteration {it + 1:5d}  loss {mean_loss:.4f}  " +
                ", ".join(f"{k} {v:.4f}" for k, v in evaluations[-1][1].items()))
    return losses, evaluations


def new_task(args):
    """The task at its start: the same seed gives the same model and data order."""
    torch.manual_seed(args.seed)
    return TASKS[args.model](args.size, np.random.default_rng(args.seed))


def reached(value, target, higher):
    return value >= target if higher else value <= target


def curve_rows(algo, platform, losses, evaluations, sim):
    """The CSV rows of one algorithm: the clock from sparsim's times per iteration."""
    compute = sim.get("training", {}).get("compute_s", 0.0)
    metrics = dict(evaluations)
    rows, clock = [], 0.0
    for it, loss in enumerate(losses):
        rec = sim["iterations"][it]
        allreduce = rec["time_s"]
        clock += compute + allreduce
        row = {"algo": algo, "platform": platform, "iter": it, "loss": loss, "compute_s": compute, "allreduce_s": allreduce,
               "time_s": clock, "volume_bytes": rec["volume_bytes"]}
        row.update(metrics.get(it + 1, {}))
        rows.append(row)
    return rows


def to_target(rows, evaluations, metric, higher, target):
    """(simulated seconds, iterations) when the metric first reaches the target, or (None, None)."""
    clock = {r["iter"] + 1: r["time_s"] for r in rows}
    for done, m in evaluations:
        if reached(m[metric], target, higher):
            return (clock.get(done, 0.0), done)
    return (None, None)


# ---------------------------------------------------------------------------
# Command line

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def algorithms(sparsim, text):
    """--algo: 'all' is every algorithm `sparsim list` names, ring first."""
    if text != "all":
        names = [a.strip() for a in text.split(",") if a.strip()]
        if not names or len(set(names)) != len(names):
            raise UsageError("--algo must be a comma list of distinct algorithm names, or all")
        return names
    try:
        listing = subprocess.run([sparsim, "list"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise UsageError(f"--sparsim {sparsim}: cannot list its algorithms ({e})") from e
    names, inside = [], False
    for line in listing.splitlines():
        if not line.startswith(" "):
            inside = line.strip() == "algorithms:"
        elif inside and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
    if TARGET_ALGO in names:
        names.remove(TARGET_ALGO)
        names.insert(0, TARGET_ALGO)
    return names


def parse_args(argv):
    sparsim_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, sparsim_args = argv[:cut], argv[cut + 1:]
    sizes = ", ".join(f"{m}: batch {d['batch']}, lr {d['lr']}" for m, d in DEFAULTS.items())
    parser = Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a model with P data-parallel workers whose aggregated update each iteration is\n"
                    "the global result of sparsim's algorithm (exact mode, its own error feedback), on a\n"
                    "simulated clock: compute on --device plus the allreduce on --platform.",
        epilog=f"""Options after -- go to `sparsim run` as they are (an algorithm's own settings,
--warmup, --network, ...).

metric and target per model: cnn test_accuracy, lstm test_bits_per_char (lower is
better), transformer test_masked_accuracy.  The default target is the {TARGET_ALGO} run's
final metric given up by {TARGET_MARGIN:.0%} (a chosen margin); --algo all runs {TARGET_ALGO} first.
defaults per model: {sizes}.

exit status: 0 success, 1 the run failed, 2 bad input (one line on stderr).""")
    parser.add_argument("--model", required=True, choices=sorted(TASKS), help="model family (record_gradients.py)")
    parser.add_argument("--size", choices=sorted(SIZES["cnn"]), default="small",
                        help="model size (default small)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    parser.add_argument("--algo", default="all", help="comma list of sparsim algorithms, or all (default all)")
    parser.add_argument("--ranks", type=int, default=4, metavar="P", help="data-parallel workers (default 4)")
    parser.add_argument("--density", type=float, default=0.01, help="k / n of the sparse algorithms (default 0.01)")
    parser.add_argument("--iters", type=int, default=200, help="training iterations (default 200)")
    parser.add_argument("--eval-every", type=int, default=10, metavar="E",
                        help="evaluate on the test set every E iterations and after the last (default 10)")
    parser.add_argument("--platform", default="1gbe",
                        help="sparsim platform, or a comma list: one training, each platform's clock (default 1gbe)")
    parser.add_argument("--device", default="p100",
                        help="sparsim device profile: prices selection kernels and, with the model's FLOPs, "
                             "the compute (default p100)")
    parser.add_argument("--compute", type=float, metavar="S",
                        help="seconds of forward + backward per iteration, instead of the model's FLOPs on --device")
    parser.add_argument("--batch", type=int, metavar="B", help="mini-batch per worker (default per model)")
    parser.add_argument("--lr", type=float, help="learning rate (default per model)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the model, the data and sparsim (default 1)")
    parser.add_argument("--target", type=float,
                        help=f"the metric's target (default: from the {TARGET_ALGO} run, see below)")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for torch (default 1)")
    parser.add_argument("--sparsim", default=None, metavar="PATH",
                        help="the sparsim binary (default: build/sparsim beside this folder)")
    parser.add_argument("--plot", action="store_true", help="also draw DIR/accuracy.png")
    parser.add_argument("--quiet", action="store_true", help="no progress on stdout")
    args = parser.parse_args(argv)
    args.sparsim_args = sparsim_args
    for name in ("ranks", "iters", "threads", "eval_every"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    task_args(args)
    if not (math.isfinite(args.density) and args.density > 0):
        raise UsageError("--density must be a positive number")
    if args.density > 1:
        raise UsageError("--density must be at most 1")
    if args.compute is not None and not (math.isfinite(args.compute) and args.compute > 0):
        raise UsageError("--compute must be a positive number of seconds")
    if args.target is not None and not math.isfinite(args.target):
        raise UsageError("--target must be a number")
    if args.sparsim is None:
        args.sparsim = os.path.join(os.path.dirname(HERE), "build", "sparsim")
    if not os.access(args.sparsim, os.X_OK):
        raise UsageError(f"--sparsim {args.sparsim}: not an executable file")
    args.algos = algorithms(args.sparsim, args.algo)
    args.platforms = [x.strip() for x in args.platform.split(",") if x.strip()]
    if not args.platforms or len(set(args.platforms)) != len(args.platforms):
        raise UsageError("--platform must be a platform or a comma list of distinct ones")
    return args


def run(args, log):
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {args.out}: {e.strerror}") from e
    for name in ("curves.csv", "summary.json", "accuracy.png"):   # no earlier run's file passes for this one's
        if os.path.exists(os.path.join(args.out, name)):
            os.unlink(os.path.join(args.out, name))
    metric, higher = METRIC[args.model]
    task = new_task(args)
    n = sum(p.numel() for p in task.model.parameters())
    args.flops = forward_flops(task, args.batch)
    log(f"{args.model} ({args.size}): n = {n}, {args.flops:.4g} forward FLOPs per sample; {args.ranks} workers x "
        f"batch {args.batch}; {args.iters} iterations on {args.platform} with {args.device}")
    rows, per_algo, start, fields = [], {}, None, []
    for algo in args.algos:
        log(f"{algo}:")
        task = new_task(args)
        runs = []
        try:
            for plat in args.platforms:
                out = os.path.join(args.out, "sim", plat.replace("/", "_"), algo)
                if os.path.isdir(out):
                    shutil.rmtree(out)
                runs.append(SparsimAggregator(args.sparsim, algo, plat, args, n, out))
        except BaseException:
            Aggregators(runs).abandon()
            raise
        agg = Aggregators(runs)
        wall = time.monotonic()
        try:
            losses, evaluations = train(task, args, agg, log)
            sims = agg.finish()
        except BaseException:
            agg.abandon()
            raise
        start = evaluations[0][1]
        for k in start:
            if k not in fields:
                fields.append(k)
        a = per_algo[algo] = {"final": evaluations[-1][1], "evaluations": evaluations, "k": sims[0]["k"],
                              "wall_s": round(time.monotonic() - wall, 3), "loss": losses, "platforms": {}}
        for plat, sim in zip(args.platforms, sims):
            plat_rows = curve_rows(algo, plat, losses, evaluations, sim)
            rows += plat_rows
            compute = sim.get("training", {})
            a["platforms"][plat] = {
                "sim_time_s": plat_rows[-1]["time_s"],
                "iteration_mean_s": plat_rows[-1]["time_s"] / len(plat_rows),
                "allreduce_mean_s": float(np.mean([r["allreduce_s"] for r in plat_rows])),
                "compute_s": compute.get("compute_s", 0.0), "compute_source": compute.get("compute_source", ""),
                "volume_bytes_mean": float(np.mean([r["volume_bytes"] for r in plat_rows])),
                "_rows": plat_rows,
            }
    # the target, then each algorithm's time and iterations to reach it
    if args.target is not None:
        target, source = args.target, "given (--target)"
    elif TARGET_ALGO in per_algo:
        final = per_algo[TARGET_ALGO]["final"][metric]
        target = final * (1 - TARGET_MARGIN) if higher else final * (1 + TARGET_MARGIN)
        source = (f"the {TARGET_ALGO} run's final {metric} {final:.6g} " +
                  ("less" if higher else "plus") + f" {TARGET_MARGIN:.0%} (a chosen margin)")
    else:
        raise UsageError(f"--algo without {TARGET_ALGO} needs --target (the default target comes from "
                         f"the {TARGET_ALGO} run)")
    for algo, a in per_algo.items():
        a["iters_to_target"] = None
        for plat, pa in a["platforms"].items():
            pa["time_to_target_s"], a["iters_to_target"] = to_target(pa.pop("_rows"), a["evaluations"], metric,
                                                                     higher, target)
        a["reached"] = a["iters_to_target"] is not None
        a["evaluations"] = [{"iters": d, **m} for d, m in a["evaluations"]]
    ref = per_algo.get(TARGET_ALGO)
    for algo, a in per_algo.items():
        if not ref:
            continue
        # the per-iteration gain and the iteration-count penalty over the reference run
        # (a target met before any update, at 0 iterations, leaves the ratios out)
        for plat, pa in a["platforms"].items():
            pr = ref["platforms"][plat]
            pa["iteration_speedup_vs_" + TARGET_ALGO] = pr["iteration_mean_s"] / pa["iteration_mean_s"]
            if ref["iters_to_target"] and a["iters_to_target"]:
                pa["time_to_target_speedup_vs_" + TARGET_ALGO] = pr["time_to_target_s"] / pa["time_to_target_s"]
        if ref["iters_to_target"] and a["iters_to_target"]:
            a["iters_ratio_vs_" + TARGET_ALGO] = a["iters_to_target"] / ref["iters_to_target"]
    summary = {
        "model": args.model, "size": args.size, "n": n, "ranks": args.ranks, "batch": args.batch, "lr": args.lr,
        "momentum": MOMENTUM, "iters": args.iters, "eval_every": args.eval_every, "seed": args.seed,
        "density": args.density, "platforms": args.platforms, "device": args.device,
        "compute": {"given_s": args.compute} if args.compute else {"forward_flops_per_sample": args.flops},
        "sparsim_args": args.sparsim_args, "metric": {"name": metric, "higher_is_better": higher},
        "target": {"value": target, "source": source}, "start": start, "algorithms": per_algo,
    }
    columns = ["algo", "platform", "iter", "loss", "compute_s", "allreduce_s", "time_s", "volume_bytes"] + fields
    tmp_csv = os.path.join(args.out, f".curves.csv.{os.getpid()}.part")
    tmp_json = os.path.join(args.out, f".summary.json.{os.getpid()}.part")
    try:
        with open(tmp_csv, "w", newline="") as f:
            w = csv.DictWriter(f, columns, restval="", lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
        with open(tmp_json, "w") as f:
            json.dump(summary, f, indent=1)
            f.write("\n")
        os.replace(tmp_csv, os.path.join(args.out, "curves.csv"))
        os.replace(tmp_json, os.path.join(args.out, "summary.json"))
    finally:
        for p in (tmp_csv, tmp_json):
            if os.path.exists(p):
                os.unlink(p)
    log(f"target {metric} {'>=' if higher else '<='} {target:.4g} ({source})")
    for plat in args.platforms:
        log(f"on {plat}:")
        for algo, a in per_algo.items():
            pa = a["platforms"][plat]
            t = f"{pa['time_to_target_s']:.4g} s in {a['iters_to_target']} iterations" if a["reached"] else "not reached"
            log(f"  {algo:13s} final {metric} {a['final'][metric]:.4f}; iteration {pa['iteration_mean_s'] * 1e3:.3f} "
                f"ms; to target: {t}")
    if args.plot:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "notebooks"))
        from plot_accuracy import plot_accuracy
        plot_accuracy(args.out, os.path.join(args.out, "accuracy.png"))
    return summary


def main(argv):
    return command_main(PROG, argv, parse_args, run,
                        lambda args: (lambda line: None) if args.quiet else (lambda line: print(line, flush=True)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
