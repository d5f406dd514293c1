#!/usr/bin/python3
"""Why Gaussian-k's first estimate lands where it does (bench/README.md
section 24): on each recorded trace, the count above the estimate over k,
thr = mean + z sd of a rank's gradient, z = |Phi^-1(density / 2)| (2.58 at
1%), on the raw gradients of every rank and iteration (no residual), six ways:

  data                the trace itself
  noise detached      each coordinate's own scale (its RMS over ranks and
                      iterations, each rank over its own RMS) times the noise
                      of a randomly chosen other coordinate: the noise no
                      longer knows the scale it belongs to
  one mixture         the same scales times one mixture of two normals for
                      every coordinate (the profile's spikes, spike_scale)
  table               the same scales times the mixture of the profile's row
                      of the noise table for the coordinate's scale
  generator, one / table   sparsim's generator on the profile fitted to the
                      trace, without and with its noise table (iteration 0
                      of an exact Gaussian-k run, the first_over_k stat)

The first four use the trace's own scales, so they isolate the noise's
shape; the last two are the whole fitted process.

Then the noise by quintile of scale (the coordinates sorted by sigma_i, in
five groups of equal count): its fourth moment, and the share of draws
under 0.1 of the coordinate's RMS.  And what error feedback accumulates: the cosine of a rank's gradient with
its own 1 and 5 iterations later, and the mean cosine over every pair of
the recorded iterations (the profile's `mean` as `sparsim profile` fits it
now, on rank 0; the lag-1 cosine is what it fitted before), mean over ranks.

usage: bench/noise_by_scale.py TRACE_DIR... [--density 0.01] [--build build]
       [--work runs/noise-by-scale]
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tables  # noqa: E402  (the shared helpers)

import numpy as np



def sh(cmd):
    return tables.sh(cmd, "noise_by_scale")


def count_over_k(x, z, k):
    """mean over (iteration, rank) of #{|x| > mean + z sd} / k; x is (I, P, n)"""
    mu = x.mean(axis=-1, keepdims=True)
    sd = x.std(axis=-1, keepdims=True)
    return float(((np.abs(x) > mu + z * sd).sum(axis=-1) / k).mean())


def mixture(rng, shape, e, ks):
    base = math.sqrt(1.0 / (1 - e + e * ks * ks))
    return rng.standard_normal(shape) * np.where(rng.random(shape) < e, ks * base, base)


def generator_first(sparsim, prof, P, density, out):
    sh([sparsim, "run", "--algo", "gaussiank", "--gaussian-variant", "authors", "--ranks", str(P), "--density",
        str(density), "--iters", "1", "--payload", "exact", "--workload", prof, "--out", out, "--quiet",
        "--no-csv", "--no-trace"])
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["iterations"][0]["stats"]["first_over_k"]["mean"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=os.path.join("runs", "noise-by-scale"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not 0 < a.density < 1:
        print("noise_by_scale: --density must be in (0, 1)", file=sys.stderr)
        return 2
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    z = statistics.NormalDist().inv_cdf(1 - a.density / 2)
    rows = ["| trace | data | noise detached | one mixture | table | generator, one mixture | generator, table |",
            "|---|---|---|---|---|---|---|"]
    quint = ["| trace | kurtosis by quintile of scale, smallest first | share of draws under 0.1, by quintile |",
             "|---|---|---|"]
    pers = ["| trace | cosine, lag 1 | cosine, lag 5 | mean cosine over all pairs | profile `mean` |", "|---|---|---|---|---|"]
    for tr in a.traces:
        tag = os.path.basename(os.path.normpath(tr))
        try:
            g = np.load(os.path.join(tr, "grads.npy"), mmap_mode="r")
        except (OSError, ValueError) as e:
            print("noise_by_scale: %s: not a recorded trace (%s)" % (tr, e), file=sys.stderr)
            return 2
        if g.ndim != 3:
            print("noise_by_scale: %s: grads.npy is not (I, P, n)" % tr, file=sys.stderr)
            return 2
        I, P, n = g.shape
        k = int(a.density * n)
        prof = os.path.join(a.work, tag + ".json")
        if not os.path.exists(prof):
            sh([sparsim, "profile", "--grad-file", tr, "--out", prof])
        with open(prof) as f:
            p = json.load(f)
        x = np.asarray(g, dtype=np.float64)
        x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True))  # each rank over its own RMS, as the fit does
        sig = np.sqrt((x * x).mean(axis=(0, 1)))
        nz = sig > 0
        zn = np.where(nz, x / np.where(nz, sig, 1), 0.0)
        rng = np.random.default_rng(a.seed)
        cols = [count_over_k(x, z, k), count_over_k(sig * zn[:, :, rng.permutation(n)], z, k),
                count_over_k(sig * mixture(rng, x.shape, p["spikes"], p["spike_scale"]), z, k)]
        noise = p.get("noise")
        if noise:
            lsig = np.log10(np.where(nz, sig, 1e-300))
            row = np.zeros(n, dtype=int)
            for b, r in enumerate(noise[:-1]):
                row += lsig >= r["upto"]
            e = np.array([r["spikes"] for r in noise])[row]
            ks = np.array([r["spike_scale"] for r in noise])[row]
            base = np.sqrt(1.0 / (1 - e + e * ks * ks))
            draws = rng.standard_normal(x.shape) * np.where(rng.random(x.shape) < e, ks * base, base)
            cols.append(count_over_k(sig * draws, z, k))
            flat = dict(p)
            del flat["noise"]
            flat_path = os.path.join(a.work, tag + ".one-mixture.json")
            with open(flat_path, "w") as f:
                json.dump(flat, f)
            cols.append(generator_first(sparsim, flat_path, P, a.density, os.path.join(a.work, tag + "-one")))
            cols.append(generator_first(sparsim, prof, P, a.density, os.path.join(a.work, tag + "-table")))
        else:
            cols += [None, None, None]
        rows.append("| %s | %s |" % (tag, " | ".join("-" if c is None else "%.2f" % c for c in cols)))
        order = np.argsort(sig)
        groups = np.array_split(order[nz[order]], 5)
        quint.append("| %s | %s | %s |" % (tag, ", ".join("%.0f" % float(np.mean(zn[:, :, d] ** 4)) for d in groups),
                                           ", ".join("%.2f" % float(np.mean(np.abs(zn[:, :, d]) < 0.1)) for d in groups)))
        u = x / np.sqrt((x * x).sum(axis=-1, keepdims=True))  # (I, P, n) unit gradients
        lag = lambda L: float(np.mean([(u[t] * u[t + L]).sum(axis=-1).mean() for t in range(I - L)])) if I > L else None
        w = u.sum(axis=0)
        allp = float(((w * w).sum(axis=-1).mean() - I) / (I * (I - 1))) if I > 1 else None
        pers.append("| %s | %s |" % (tag, " | ".join("-" if c is None else "%.4f" % c for c in
                                                        (lag(1), lag(5), allp, p["mean"]))))
    print("\n".join(rows))
    print()
    print("\n".join(quint))
    print()
    print("\n".join(pers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
