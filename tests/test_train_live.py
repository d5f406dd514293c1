#!/usr/bin/python3
"""Closed-loop training (traces/train_live.py, sparsim run --grad-live) against references.

- Every dense algorithm trains the tiny CNN as plain averaged SGD does (the P gradients summed in
  Python, over P): the same losses and test metrics to float rounding.
- TopkA and Ok-Topk at density 1.0 select every entry: the same curves as dense.
- gTop-k at P = 1 is local top-k with error feedback: the reference keeps the residual in Python
  (acc += g; the k largest |acc| are the update; they leave acc) and the curves agree.
- A sparse scheme at density 1% does not train as dense does (the checks above can fail).
- The tiny CNN's forward FLOPs as counted equal a count by hand, and counting changes nothing.
- The LSTM and the transformer train through the loop too, each with its own metric.
- Every algorithm `sparsim list` names runs 3 iterations at P = 4 through the trainer: finite
  losses, the first loss the same for all (same model, same batch), the clock the sum of compute
  and each iteration's simulated allreduce, bytes moved in each iteration.
- The same seed gives the same curves.csv, byte for byte; a second platform the same curves with
  its own clock; --plot draws the figure, and notebooks/accuracy.ipynb executed headless shows it; an algorithm
  reaches the target exactly where one of its evaluations does.
- Bad input: --grad-live with a second algorithm, on a descriptor that is no socket, or given to
  sweep, crossover or workload-stats exits 2 with one line; a trainer that goes away mid-run ends sparsim with status 1 and one line.

usage: test_train_live.py SPARSIM
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "traces"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import train_live  # noqa: E402

SPARSIM = os.path.abspath(sys.argv[1])
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def config(**kw):
    a = argparse.Namespace(model="cnn", size="tiny", ranks=4, density=0.01, iters=8, eval_every=4,
                           platform="1gbe", device="p100", compute=None, flops=1e5, batch=16, lr=0.05,
                           seed=3, sparsim_args=[])
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def sparsim_curve(tmp, algo, **kw):
    args = config(**kw)
    task = train_live.new_task(args)
    n = sum(p.numel() for p in task.model.parameters())
    agg = train_live.SparsimAggregator(SPARSIM, algo, args.platform, args, n, os.path.join(tmp, f"{algo}-{kw}"))
    try:
        losses, evals = train_live.train(task, args, agg)
        sim = agg.finish()
    except BaseException:
        agg.abandon()
        raise
    return losses, evals, sim


def python_curve(aggregate, **kw):
    args = config(**kw)
    return train_live.train(train_live.new_task(args), args, aggregate)


def close(a, b, rtol=1e-4):
    """two curves (losses, evaluations) equal to float rounding"""
    la, ea = np.array(a[0]), np.array(b[0])
    ma = np.array([[v for v in m.values()] for _, m in a[1]])
    mb = np.array([[v for v in m.values()] for _, m in b[1]])
    return la.shape == ea.shape and np.allclose(la, ea, rtol=rtol, atol=1e-6) and ma.shape == mb.shape and \
        np.allclose(ma, mb, rtol=rtol, atol=1e-6)


def gap(a, b):
    return float(np.max(np.abs(np.array(a[0]) - np.array(b[0]))))


def summed(it, grads):
    return grads.sum(0)


class LocalTopk:
    """the reference of gTop-k at P = 1: local exact top-k with error feedback"""

    def __init__(self, density):
        self.density, self.acc = density, None

    def __call__(self, it, grads):
        g = grads[0].double()
        self.acc = g.clone() if self.acc is None else self.acc + g
        k = int(self.acc.numel() * self.density)
        idx = torch.topk(self.acc.abs(), k).indices
        out = torch.zeros_like(self.acc)
        out[idx] = self.acc[idx]
        self.acc[idx] = 0
        return out.float()


tmp = tempfile.mkdtemp(prefix="sparsim-test-train-live-")
torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)

dense_ref = python_curve(summed)
for algo in ("ring", "recdoubling", "rabenseifner", "nccl-ring", "nccl-tree"):
    got = sparsim_curve(tmp, algo)
    check(close(got[:2], dense_ref), f"{algo} trains as averaged SGD (largest loss gap {gap(got, dense_ref):.2e})")
for algo in ("topka", "oktopk"):
    got = sparsim_curve(tmp, algo, density=1.0)
    check(close(got[:2], dense_ref), f"{algo} at density 1.0 trains as dense (largest loss gap "
                                     f"{gap(got, dense_ref):.2e})")
sparse = sparsim_curve(tmp, "topka", density=0.01)
check(not close(sparse[:2], dense_ref) and gap(sparse, dense_ref) > 1e-3,
      f"topka at density 0.01 trains differently from dense (gap {gap(sparse, dense_ref):.2e})")

ref = python_curve(LocalTopk(0.05), ranks=1, density=0.05)
got = sparsim_curve(tmp, "gtopk", ranks=1, density=0.05)
check(close(got[:2], ref), f"gtopk at P = 1 is local top-k with error feedback (largest loss gap {gap(got, ref):.2e})")
no_ef = python_curve(lambda it, g: LocalTopk(0.05)(it, g), ranks=1, density=0.05)   # a fresh residual each time
check(not close(got[:2], no_ef, rtol=1e-6), "... and not top-k without error feedback")

# the compute's FLOPs: the tiny CNN counted by hand (2 x multiply-adds of its four 3x3 convolutions
# on 8x8 and 4x4 maps, widths 4 and 8, and its two linear layers 32 -> 16 -> 10), and counting leaves
# the run as it was
args = config()
task = train_live.new_task(args)
by_hand = 2 * (64 * 4 * 1 * 9 + 64 * 4 * 4 * 9 + 16 * 8 * 4 * 9 + 16 * 8 * 8 * 9 + 32 * 16 + 16 * 10)
check(train_live.forward_flops(task, 16) == by_hand, f"the tiny CNN's forward FLOPs per sample: {by_hand} by hand")
check(close(train_live.train(task, args, summed), dense_ref, rtol=0), "... and counting them changes nothing of the run")

# every algorithm through the command, a few iterations at P = 4
out = os.path.join(tmp, "all")
r = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "traces", "train_live.py"),
                    "--model", "cnn", "--size", "tiny", "--ranks", "4", "--iters", "3", "--eval-every", "3",
                    "--algo", "all", "--sparsim", SPARSIM, "--out", out, "--quiet", "--seed", "5", "--plot"],
                   capture_output=True, text=True, timeout=300)
check(r.returncode == 0, "train_live.py --algo all runs: " + r.stderr.strip()[-300:])
if r.returncode == 0:
    s = json.load(open(os.path.join(out, "summary.json")))
    listed = subprocess.run([SPARSIM, "list"], capture_output=True, text=True).stdout
    names = [l.split()[0] for l in listed.split("platforms:")[0].splitlines()[1:] if l.strip()]
    check(sorted(s["algorithms"]) == sorted(names) and len(names) >= 12,
          f"every algorithm ran ({len(s['algorithms'])} of {len(names)})")
    import csv
    rows = list(csv.DictReader(open(os.path.join(out, "curves.csv"))))
    first = {r["loss"] for r in rows if r["iter"] == "0"}
    check(len(first) == 1, "the first iteration's loss is the same for every algorithm")
    png = os.path.join(out, "accuracy.png")
    check(os.path.getsize(png) > 10000 and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
          "--plot draws accuracy.png (notebooks/plot_accuracy.py)")
    nb_out = os.path.join(tmp, "nb")
    env = dict(os.environ, SPARSIM_ACCURACY_DIR=out, SPARSIM_ACCURACY_PNG=os.path.join(tmp, "nb.png"),
               PATH="/usr/bin:" + os.environ.get("PATH", ""))
    r3 = subprocess.run(["jupyter", "nbconvert", "--to", "notebook", "--execute",
                         os.path.join(os.path.dirname(HERE), "notebooks", "accuracy.ipynb"), "--output-dir", nb_out,
                         "--output", "executed.ipynb"], capture_output=True, text=True, env=env, timeout=120)
    shown = r3.returncode == 0 and open(os.path.join(nb_out, "executed.ipynb")).read().count('"image/png"') == 1
    check(shown, "notebooks/accuracy.ipynb, executed headless, shows the figure " + r3.stderr.strip()[-200:])
    t = s["target"]["value"]
    ok_target = all(a["reached"] == any(e["test_accuracy"] >= t for e in a["evaluations"])
                    for a in s["algorithms"].values())
    check(ok_target and s["algorithms"]["ring"]["reached"], "time to target: reached exactly where an evaluation "
          "meets the target (ring's own, from which the default comes)")
    ok_clock = True
    for algo in names:
        mine = [r for r in rows if r["algo"] == algo]
        sim = json.load(open(os.path.join(out, "sim", "1gbe", algo, "summary.json")))
        clock = 0.0
        for r_, it in zip(mine, sim["iterations"]):
            clock += sim["training"]["compute_s"] + it["time_s"]
            ok_clock &= abs(float(r_["time_s"]) - clock) <= 1e-12 * max(1.0, clock)
            ok_clock &= float(r_["volume_bytes"]) == it["volume_bytes"] > 0 and np.isfinite(float(r_["loss"]))
        ok_clock &= len(mine) == 3 and mine[-1]["test_accuracy"] != ""
    check(ok_clock, "every algorithm's clock is compute + its simulated allreduce, iteration by iteration")
    again = os.path.join(tmp, "again")
    r2 = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "traces", "train_live.py"),
                         "--model", "cnn", "--size", "tiny", "--ranks", "4", "--iters", "3", "--eval-every", "3",
                         "--algo", "ring,oktopk", "--sparsim", SPARSIM, "--out", again, "--quiet", "--seed", "5",
                         "--platform", "1gbe,daint"], capture_output=True, text=True, timeout=300)
    lines = open(os.path.join(again, "curves.csv")).readlines()[1:] if r2.returncode == 0 else []
    same = [l for l in open(os.path.join(out, "curves.csv")) if l.startswith(("ring,", "oktopk,"))] \
        == [l for l in lines if ",1gbe," in l]
    check(same, "the same seed gives the same curves, byte for byte " + r2.stderr.strip()[-200:])
    daint = [l.split(",") for l in lines if ",daint," in l]
    gbe = [l.split(",") for l in lines if ",1gbe," in l]
    check(len(daint) == len(gbe) == 6 and all(d[3] == g[3] and d[5] != g[5] for d, g in zip(daint, gbe)),
          "a second platform: the same training (the results agree bit for bit), its own clock")

# the other two families through the loop: a few iterations, their own metric
for model, metric in (("lstm", "test_bits_per_char"), ("transformer", "test_masked_accuracy")):
    fam = os.path.join(tmp, model)
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "traces", "train_live.py"),
                        "--model", model, "--size", "tiny", "--ranks", "4", "--iters", "3", "--eval-every", "3",
                        "--algo", "ring,oktopk", "--sparsim", SPARSIM, "--out", fam, "--quiet"],
                       capture_output=True, text=True, timeout=300)
    s = json.load(open(os.path.join(fam, "summary.json"))) if r.returncode == 0 else {}
    check(r.returncode == 0 and s["metric"]["name"] == metric and
          all(metric in a["final"] and len(a["evaluations"]) == 2 for a in s["algorithms"].values()),
          f"{model} trains through the loop, evaluated on {metric} " + r.stderr.strip()[-200:])

# bad input and a trainer that goes away
base = [SPARSIM, "run", "--ranks", "4", "--n", "100", "--out", os.path.join(tmp, "bad"), "--quiet"]
a, b = socket.socketpair()
r = subprocess.run(base + ["--algo", "ring,topka", "--grad-live", str(b.fileno())], pass_fds=[b.fileno()],
                   capture_output=True, text=True, timeout=60)
check(r.returncode == 2 and r.stderr.count("\n") == 1 and "one at a time" in r.stderr,
      "--grad-live with two algorithms: exit 2, one line: " + r.stderr.strip())
r = subprocess.run(base + ["--algo", "ring", "--grad-live", "0"], capture_output=True, text=True, timeout=60,
                   stdin=subprocess.DEVNULL)
check(r.returncode == 2 and r.stderr.count("\n") == 1 and "not a socket" in r.stderr,
      "--grad-live on no socket: exit 2, one line: " + r.stderr.strip())
for cmd in (["sweep", "--ranks", "4,8"], ["crossover"], ["workload-stats"]):
    r = subprocess.run([SPARSIM, *cmd, "--algo", "ring", "--n", "100", "--grad-live", "0"], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and r.stderr.count("\n") == 1 and "one run from a trainer" in r.stderr,
          f"--grad-live refused by {cmd[0]}: exit 2, one line: " + r.stderr.strip())
p = subprocess.Popen(base + ["--algo", "topka", "--iters", "3", "--grad-live", str(b.fileno())],
                     pass_fds=[b.fileno()], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
b.close()
a.recv(100)
a.sendall(np.array([0x44415247, 0], dtype="<u4").tobytes() + np.ones(400, dtype="<f4").tobytes())
a.recv(8 + 400)
a.close()   # gone before iteration 1
err = p.communicate(timeout=60)[1]
check(p.returncode == 1 and err.count("\n") == 1 and "closed" in err,
      "a trainer gone mid-run: exit 1, one line: " + err.strip())

import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
