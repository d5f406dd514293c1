#!/usr/bin/python3
"""ZEN-style hashed synchronisation beside Ok-Topk and TopkDSA (the compressed-schemes issue, item 5).

BERT's gradient (n = 133,547,324, k at density 0.01), model payloads, 2 iterations, the wire alone
(device none), on 1gbe and daint at P = 64 and 256: zen in its balanced form, zen in its central form
(--zen-form central), Ok-Topk with the authors' BERT settings (no warm-up) and TopkDSA.  Time per
iteration: the mean of the two iterations, except Ok-Topk's, whose first recomputes its thresholds
exactly and second reuses them: taken at its steady state over tau' = 128, (t0 + 127 t1) / 128, as
bench/papers.py and the crossover map take it.  Volume per rank: the same weighting.

usage: bench/zen.py [--build build] [--work DIR] [--ranks 64,256] [--markdown FILE]
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


def summary_path(out, algo, algos):
    """a run of one algorithm writes its summary in --out, of several in a folder each"""
    return os.path.join(out, algo, "summary.json") if "," in algos else os.path.join(out, "summary.json")


def per_iteration(out, algo, algos):
    """(time s, volume MB) of the run's iterations, Ok-Topk's at its steady state"""
    its = json.load(open(summary_path(out, algo, algos)))["iterations"]
    t = [i["time_s"] for i in its]
    v = [i["volume_bytes"] / 1e6 for i in its]
    if algo == "oktopk":
        taup = TAU_PRIME["bert"]
        return steady_time(t[0], t[1], taup), steady_time(v[0], v[1], taup)
    return sum(t) / len(t), sum(v) / len(v)


def run(sparsim, out, P, plat, algos, extra):
    if all(os.path.exists(summary_path(out, a, algos)) for a in algos.split(",")):
        return
    cmd = [sparsim, "run", "--algo", algos, "--ranks", str(P), "--platform", plat, "--workload", "bert",
           "--density", "0.01", "--oktopk-preset", "bert", "--warmup", "0", "--payload", "model", "--iters", "2",
           "--device", "none", "--out", out, "--quiet", "--no-csv", "--no-trace"] + extra
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("zen: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "zen"))
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    lines = ["| platform | P | zen: s | zen central: s | oktopk (steady): s | topkdsa: s | "
             "zen's speedup over oktopk / topkdsa | volume per rank, MB: zen / oktopk (steady) / topkdsa |",
             "|---|---|---|---|---|---|---|---|"]
    for plat in ("1gbe", "daint"):
        for P in [int(x) for x in a.ranks.split(",")]:
            base, three = os.path.join(a.work, "%s-%d" % (plat, P)), "zen,oktopk,topkdsa"
            run(sparsim, base, P, plat, three, [])
            run(sparsim, base + "-central", P, plat, "zen", ["--zen-form", "central"])
            z, c = per_iteration(base, "zen", three), per_iteration(base + "-central", "zen", "zen")
            o, d = per_iteration(base, "oktopk", three), per_iteration(base, "topkdsa", three)
            lines.append("| %s | %d | %.4g | %.4g | %.4g | %.4g | %.2f / %.2f | %.1f / %.1f / %.1f |" % (
                plat, P, z[0], c[0], o[0], d[0], o[0] / z[0], d[0] / z[0], z[1], o[1], d[1]))
    return tables.emit(lines, a.markdown)


if __name__ == "__main__":
    sys.exit(main())
