#!/usr/bin/python3
"""What the workers' own gradient scales (rank_sd, at the authors' batch per worker) change in the
paper-scale numbers (the workload issue, item 1).

For the Ok-Topk paper's three models at the authors' settings (VGG-16 at density 0.02, the LSTM at
0.02, BERT at 0.01; `--oktopk-preset`, no warm-up), on `daint` with the wire alone (device none),
model payloads, 2 iterations, each data-dependent algorithm (Ok-Topk, TopkDSA, Gaussian-k with the
Ok-Topk authors' loop, ZEN) and the ring beside them, four ways: the built-in profile with its
rank_sd (now the default) and with `--grad-rank-sd 0` (as before), each from a cold residual (the
default) and from a settled one (`--settle 100`).  Time per iteration: the two iterations' mean,
Ok-Topk's at its steady state over tau' ((t0 + (tau' - 1) t1) / tau', as bench/papers.py takes it).

usage: bench/rank_effect.py [--build build] [--work DIR] [--ranks 32,256] [--markdown FILE]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import tables  # noqa: E402  (the printed and written table)
sys.path.insert(0, os.path.join(ROOT, "notebooks"))
from plot_scaling import TAU_PRIME, steady_time  # noqa: E402  (Ok-Topk's steady state over tau')

MODELS = ("vgg16", "lstm", "bert")
ALGOS = "ring,oktopk,topkdsa,gaussiank,zen"
WAYS = (("cold", "off", ["--grad-rank-sd", "0"]), ("cold", "on", []),
        ("settled", "off", ["--grad-rank-sd", "0", "--settle", "100"]), ("settled", "on", ["--settle", "100"]))


def run(sparsim, out, model, P):
    """{(start, term): {algo: (time per iteration, rank_sd)}} for one model and P"""
    res = {}
    for start, term, extra in WAYS:
        d = os.path.join(out, "%s-P%d-%s-%s" % (model, P, start, term))
        if not all(os.path.exists(os.path.join(d, x, "summary.json")) for x in ALGOS.split(",")):
            cmd = [sparsim, "run", "--algo", ALGOS, "--ranks", str(P), "--platform", "daint", "--workload", model,
                   "--oktopk-preset", model, "--warmup", "0", "--gaussian-variant", "oktopk", "--payload", "model",
                   "--iters", "2", "--device", "none", "--out", d, "--quiet", "--no-csv", "--no-trace"] + extra
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit("rank_effect: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
        row = {}
        for algo in ALGOS.split(","):
            with open(os.path.join(d, algo, "summary.json")) as f:
                j = json.load(f)
            t = [i["time_s"] for i in j["iterations"]]
            tpi = steady_time(t[0], t[1], TAU_PRIME[model]) if algo == "oktopk" else sum(t) / len(t)
            row[algo] = (tpi, j["config"]["grad-rank-sd"])
        res[(start, term)] = row
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "rank-effect"))
    ap.add_argument("--ranks", default="32,256")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
    except ValueError:
        print("rank_effect: --ranks wants numbers separated by commas, not %r" % a.ranks, file=sys.stderr)
        return 2
    sparsim = os.path.join(a.build, "sparsim")
    lines = ["| model (rank_sd) | P | algorithm | ms per iteration, cold: without -> with | settled: without -> with "
             "| over the ring, cold: without -> with | settled: without -> with |", "|" + "---|" * 7]
    for model in MODELS:
        for P in ranks:
            res = run(sparsim, a.work, model, P)
            sd = res[("cold", "on")]["oktopk"][1]
            for algo in ALGOS.split(",")[1:]:
                cells = []
                for start in ("cold", "settled"):
                    off, on = res[(start, "off")][algo][0], res[(start, "on")][algo][0]
                    cells.append("%.2f -> %.2f (%.2fx)" % (1e3 * off, 1e3 * on, on / off))
                for start in ("cold", "settled"):
                    sp = [res[(start, t)]["ring"][0] / res[(start, t)][algo][0] for t in ("off", "on")]
                    cells.append("%.2fx -> %.2fx" % tuple(sp))
                lines.append("| %s (%.2f) | %d | %s | %s |" % (model, sd, P, algo, " | ".join(cells)))
    return tables.emit(lines, a.markdown)


if __name__ == "__main__":
    sys.exit(main())
