#!/usr/bin/env python3
"""Recorded traces against the generator fitted to them.

For each trace folder (grads.npy + layers.json, as traces/record_gradients.py
writes them): the statistics of the trace (`sparsim workload-stats`), a
profile fitted to it (`sparsim profile --match`), the statistics of the
generator running that profile at the trace's n, P and iterations, side by
side with the ratio (marked when outside 25%); then every algorithm on
daint at the trace's P, once on the trace itself and once on the fitted
generator (exact payloads, the residual settled over the first iterations),
with the fastest of each.

usage: bench/traces_vs_generator.py TRACE_DIR... [--build build] [--work DIR] [--match 6]
       [--settle 24] [--iters 8] [--markdown FILE]
Steps whose outputs already exist in --work are not run again.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

STATS = [("kurtosis_whole", "excess kurtosis, whole vector"),
         ("kurtosis_layer_median", "excess kurtosis within a layer (median)"),
         ("kth_over_median", "k-th largest / median of |g|"),
         ("k10_over_kth", "(k/10)-th / k-th largest"),
         ("zeros", "exact zeros"),
         ("region_union_max_over_mean", "union of top-k, P equal regions: max/mean"),
         ("region_rank0_max_over_mean", "one rank's top-k, P regions: max/mean"),
         ("jaccard_ranks", "Jaccard of two ranks' top-k"),
         ("jaccard_lag1_other_rank", "Jaccard t -> t+1, another rank"),
         ("cosine_ranks", "cosine between two ranks' gradients"),
         ("cosine_lag1", "cosine t -> t+1, same rank"),
         ("global_in_rank0", "exact global top-k: share in one rank's top-k"),
         ("global_in_union", "exact global top-k: share in the union"),
         ("drift_cold_mean", "reused threshold, cold residual: mean count/k"),
         ("drift_settled_mean", "reused threshold, settled residual: mean count/k"),
         ("norm_ratio", "gradient norm, last / first iteration of a window")]
LISTS = [("union_over_k", "union of the P local top-k sets / k, P = "),
         ("jaccard_lag", "Jaccard, same rank, lag "),
         ("drift_cold", "reused threshold, cold: count/k at lag ")]


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="traces-vs-generator")
    ap.add_argument("--match", default="6")
    ap.add_argument("--settle", default="24")
    ap.add_argument("--iters", default="8")
    ap.add_argument("--markdown", default="")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    out = []
    for t in a.traces:
        name = os.path.basename(os.path.normpath(t))
        real, prof, gen = (os.path.join(a.work, name + s) for s in ("-real.json", "-profile.json", "-gen.json"))
        if not os.path.exists(real):
            sh([sparsim, "workload-stats", "--grad-file", t, "--json", real])
        r = json.load(open(real))
        if not os.path.exists(prof):
            sh([sparsim, "profile", "--grad-file", t, "--out", prof, "--match", a.match])
        if not os.path.exists(gen):
            sh([sparsim, "workload-stats", "--workload", prof, "--ranks", str(r["ranks"]), "--iters",
                str(r["iterations"]), "--json", gen])
        g = json.load(open(gen))
        out += ["", "### %s: n = %d, P = %d, %d iterations" % (name, r["n"], r["ranks"], r["iterations"]), "",
                "| statistic | trace | generator, fitted | generator/trace |", "|---|---|---|---|"]
        miss = 0
        for key, label in STATS:
            x, y = r.get(key), g.get(key)
            if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
                continue
            ratio = y / x if x else float("nan")
            bad = not (abs(ratio - 1) <= 0.25)
            miss += bad
            out.append("| %s | %.4g | %.4g | %.2f%s |" % (label.replace("|", "\\|"), x, y, ratio, " **x**" if bad else ""))
        for key, label in LISTS:
            axis = r.get({"union_over_k": "union_p", "jaccard_lag": "lags", "drift_cold": "lags"}[key], [])
            for i, (x, y) in enumerate(zip(r.get(key, []), g.get(key, []))):
                if x is None or y is None:
                    continue
                ratio = y / x if x else float("nan")
                bad = not (abs(ratio - 1) <= 0.25)
                miss += bad
                out.append("| %s%s | %.4g | %.4g | %.2f%s |" % (label, axis[i] if i < len(axis) else i, x, y,
                                                                 ratio, " **x**" if bad else ""))
        out.append("")
        out.append("%d statistic(s) outside 25%% (marked x)." % miss)
        # every algorithm on daint, the trace against its fitted generator
        times = {}
        for src, extra in (("trace", ["--grad-file", t]), ("generator", ["--workload", prof])):
            d = os.path.join(a.work, "%s-daint-%s" % (name, src))
            if not os.path.exists(os.path.join(d, "comparison.csv")):
                sh([sparsim, "run", "--algo", "all", "--ranks", str(r["ranks"]), "--platform", "daint-simgrid", "--network",
                    "smpi", "--device", "p100", "--payload", "exact", "--settle", a.settle, "--iters", a.iters,
                    "--out", d, "--quiet", "--no-trace", "--no-csv"] + extra)
            with open(os.path.join(d, "comparison.csv")) as f:
                for row in csv.DictReader(f):
                    times.setdefault(row["algo"], {})[src] = (float(row["time_per_iter_s"]),
                                                              float(row["volume_bytes"]))
        out += ["", "| algorithm (daint, P = %d) | time/iter, trace (ms) | generator (ms) | volume, trace (B) | "
                    "generator (B) |" % r["ranks"], "|---|---|---|---|---|"]
        for algo, v in times.items():
            out.append("| %s | %.4g | %.4g | %.0f | %.0f |" % (algo, 1e3 * v["trace"][0], 1e3 * v["generator"][0],
                                                             v["trace"][1], v["generator"][1]))
        for src in ("trace", "generator"):
            order = sorted(times, key=lambda k: times[k][src][0])
            out.append("")
            out.append("fastest on the %s: %s" % (src, " < ".join(order[:4])))
    text = "\n".join(out)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
