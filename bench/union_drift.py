#!/usr/bin/python3
"""Where ZEN's model drifts from the exact run on a recorded trace (bench/README.md
section 24): the owners' distinct entries, i.e. the union of the ranks' top-k
selections over k, iteration by iteration, three ways:

  trace      --payload exact on the trace's own gradients (--grad-file)
  generator  --payload exact on gradients the generator draws from the profile
             fitted to the trace (the fitted process itself, no model)
  model      --payload model on that profile (the statistical model)

model / generator is the model's own error against the process it describes;
generator / trace is the fitted profile's error against the data.  Then the
noise's shape near zero: each rank's gradient over its own RMS, each
coordinate over its RMS over ranks and iterations (as `sparsim profile`
standardises it), the share of draws under 0.05, 0.1, 0.25, 0.5 and 1, on the
trace and for the profile's fitted mixture of two normals.  All runs
start from a cold (zero) residual, error feedback on, density --density.

usage: bench/union_drift.py TRACE_DIR [--ranks 8,32] [--iters 32] [--build build]
       [--work runs/union-drift]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tables  # noqa: E402  (the shared helpers)

import numpy as np

SHOWN = (0, 1, 5, 10, 20, 31)



def sh(cmd):
    return tables.sh(cmd, "union_drift")


def owners_union(sparsim, args, out):
    """per iteration: the owners' mean reduced count times the owners (P), over k"""
    if not os.path.exists(os.path.join(out, "summary.json")):
        sh([sparsim, "run", "--algo", "zen", "--out", out, "--quiet", "--no-csv", "--no-trace"] + args)
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    P = int(s["config"]["ranks"])
    return [it["stats"]["reduced_nnz"]["mean"] * P / s["k"] for it in s["iterations"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a folder that traces/record_gradients.py wrote")
    ap.add_argument("--ranks", default="8,32", help="comma-separated P, each at most the trace's workers")
    ap.add_argument("--iters", type=int, default=32)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=os.path.join("runs", "union-drift"))
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    if not os.path.isfile(os.path.join(a.trace, "grads.npy")):
        sys.exit("union_drift: %s has no grads.npy (record one with traces/record_gradients.py)" % a.trace)
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
    except ValueError:
        sys.exit("union_drift: --ranks %r is not a list of integers" % a.ranks)
    tag = os.path.basename(os.path.normpath(a.trace))
    os.makedirs(a.work, exist_ok=True)
    prof = os.path.join(a.work, tag + ".profile.json")
    if not os.path.exists(prof):
        sh([sparsim, "profile", "--grad-file", a.trace, "--out", prof])
    with open(os.path.join(a.trace, "layers.json")) as f:
        n = json.load(f)["n"]
    print("| P | iteration | trace | generator | model | model / generator | generator / trace |")
    print("|---|---|---|---|---|---|---|")
    for P in ranks:
        common = ["--ranks", str(P), "--density", str(a.density), "--iters", str(a.iters), "--seed", "1"]
        base = os.path.join(a.work, "%s-P%d" % (tag, P))
        tr = owners_union(sparsim, common + ["--grad-file", a.trace, "--payload", "exact"], base + "-trace")
        ge = owners_union(sparsim, common + ["--workload", prof, "--n", str(n), "--payload", "exact"], base + "-gen")
        mo = owners_union(sparsim, common + ["--workload", prof, "--n", str(n), "--payload", "model"], base + "-model")
        for i in SHOWN:
            if i < len(tr):
                print("| %d | %d | %.2f | %.2f | %.2f | %.2f | %.2f |" % (P, i, tr[i], ge[i], mo[i], mo[i] / ge[i],
                                                                       ge[i] / tr[i]))

    noise_near_zero(a.trace, prof)


def noise_near_zero(trace, prof):
    g = np.load(os.path.join(trace, "grads.npy"), mmap_mode="r")
    T, P, n = g.shape
    ss = np.zeros(n)
    rms = np.empty((T, P, 1))  # each rank's RMS, kept for the second pass
    for t in range(T):  # one iteration at a time: the trace may not fit in memory as doubles
        x = np.asarray(g[t], dtype=np.float64)
        rms[t] = np.sqrt((x * x).mean(axis=1, keepdims=True)).clip(1e-300)
        ss += ((x / rms[t]) ** 2).sum(axis=0)
    sig = np.sqrt(ss / (T * P))
    live = sig > 0
    cuts = (0.05, 0.1, 0.25, 0.5, 1.0)
    below = np.zeros(len(cuts))
    for t in range(T):
        a = np.abs(np.asarray(g[t][:, live], dtype=np.float64) / rms[t] / sig[live])
        below += [(a < c).sum() for c in cuts]
    below /= T * P * live.sum()
    with open(prof) as f:
        p = json.load(f)
    e, k = p.get("spikes", 0), p.get("spike_scale", 1)
    s0 = math.sqrt(1 / (1 - e + e * k * k))
    mix = [(1 - e) * math.erf(c / (s0 * math.sqrt(2))) + e * math.erf(c / (k * s0 * math.sqrt(2))) for c in cuts]
    print("\n| share of standardised draws under | " + " | ".join("%g" % c for c in cuts) + " |")
    print("|---|" + "---|" * len(cuts))
    print("| trace | " + " | ".join("%.3f" % b for b in below) + " |")
    print("| fitted mixture (spikes %.4g, scale %.3g) | " % (e, k) + " | ".join("%.3f" % m for m in mix) + " |")


if __name__ == "__main__":
    main()
