#!/usr/bin/env python3
"""The workload model against exact runs on the same gradients.

For each algorithm and P, runs `sparsim run` twice on the same profile and
seed: --payload exact (real vectors from the generator) and --payload model
(the statistical model of the same profile, no vector of length n), and
reports model/exact for every phase's volume (the bytes as the bounds count
them, mean over iterations) and simulated time, and for the time per
iteration; then the union of the P local top-k sets over k as the model
predicts it against the generator's (`sparsim workload-stats --model`).
With --ablation uniform|disjoint the model leaves out where large entries
sit or the overlap of the ranks' selections (the check must then fail).

usage: bench/model_vs_exact.py [--build build] [--n 1M] [--ranks 8,32,128] [--iters 100]
       [--algos gaussiank,topkdsa,oktopk,zen,spardl] [--platform 1gbe] [--network cm02] [--workload generic]
       [--ablation none] [--tolerance 0.10] [--markdown FILE] [--extra "--spardl-teams 4"]
Exit status 0 when every ratio is within the tolerance, 1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def run(sparsim, mode, algo, P, a, out):
    cmd = [sparsim, "run", "--algo", algo, "--ranks", str(P), "--n", a.n, "--iters", str(a.iters),
           "--payload", mode, "--network", a.network, "--platform", a.platform, "--workload", a.workload,
           "--seed", str(a.seed), "--out", out, "--quiet", "--no-csv", "--no-trace"]
    cmd += a.extra.split()
    if mode == "model" and a.ablation != "none":
        cmd += ["--model-ablation", a.ablation]
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f), time.time() - t


def phase_means(s):
    its = s["iterations"]
    out = {}
    for ph in s["phases"]:
        vol = sum(i["phases"].get(ph, {}).get("volume_bytes", 0) for i in its) / len(its)
        tim = sum(i["phases"].get(ph, {}).get("time_s", 0) for i in its) / len(its)
        out[ph] = (vol, tim)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", default="1M")
    ap.add_argument("--ranks", default="8,32,128")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--algos", default="gaussiank,topkdsa,oktopk,zen,spardl")
    ap.add_argument("--platform", default="1gbe")
    ap.add_argument("--network", default="cm02")
    ap.add_argument("--workload", default="generic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ablation", default="none", choices=["none", "uniform", "disjoint"])
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--markdown", default="")
    ap.add_argument("--extra", default="", help="more flags of sparsim run for every run (e.g. --spardl-teams 4)")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    tmp = tempfile.mkdtemp(prefix="sparsim-model-")
    rows, worst, bad = [], 0.0, 0
    for P in [int(x) for x in a.ranks.split(",")]:
        for algo in a.algos.split(","):
            e, te = run(sparsim, "exact", algo, P, a, os.path.join(tmp, "e-%s-%d" % (algo, P)))
            m, tm = run(sparsim, "model", algo, P, a, os.path.join(tmp, "m-%s-%d" % (algo, P)))
            pe, pm = phase_means(e), phase_means(m)
            for ph in pe:
                ve, vt = pe[ph]
                me, mt = pm.get(ph, (0.0, 0.0))
                rv = me / ve if ve else (1.0 if me == 0 else float("inf"))
                rt = mt / vt if vt else (1.0 if mt == 0 else float("inf"))
                rows.append((algo, P, ph, ve, rv, rt))
                for r in (rv, rt):
                    worst = max(worst, abs(r - 1))
                    bad += abs(r - 1) > a.tolerance
            t_e, t_m = e["time_per_iter_s"]["mean"], m["time_per_iter_s"]["mean"]
            rows.append((algo, P, "(iteration)", 0, None, t_m / t_e))
            worst = max(worst, abs(t_m / t_e - 1))
            bad += abs(t_m / t_e - 1) > a.tolerance
            print("%-10s P=%-4d exact %.1f s, model %.1f s of wall time" % (algo, P, te, tm), file=sys.stderr)
    lines = ["| algorithm | P | phase | exact volume (B) | model/exact volume | model/exact time |",
             "|---|---|---|---|---|---|"]
    for algo, P, ph, ve, rv, rt in rows:
        lines.append("| %s | %d | %s | %s | %s | %.3f |" % (algo, P, ph, "%.0f" % ve if rv is not None else "-",
                                                          "%.3f" % rv if rv is not None else "-", rt))
    # the union of the local top-k sets: the model's against the generator's
    Pmax = max(int(x) for x in a.ranks.split(","))
    r = subprocess.run([sparsim, "workload-stats", "--workload", a.workload, "--n", a.n, "--ranks",
                        str(Pmax), "--iters", "1", "--seed", str(a.seed), "--model"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("workload-stats failed: %s" % r.stderr)
    lines += ["", "| P | union/k, generator | union/k, model | model/generator |", "|---|---|---|---|"]
    for mt in re.finditer(r"P = (\d+)\s+([\d.]+) \(gradients: ([\d.]+), model/gradients ([\d.]+)\)", r.stdout):
        ratio = float(mt.group(4))
        lines.append("| %s | %s | %s | %.3f |" % (mt.group(1), mt.group(3), mt.group(2), ratio))
        worst = max(worst, abs(ratio - 1))
        bad += abs(ratio - 1) > a.tolerance
    text = "\n".join(lines)
    print(text)
    print("\nlargest deviation %.3f; %d ratio(s) outside +-%.0f%%" % (worst, bad, 100 * a.tolerance))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
