#!/usr/bin/env python3
"""Which algorithms survive disturbances, on Piz Daint's dragonfly at paper scale (disturbances issue).

For each P: every algorithm undisturbed (`sparsim run --algo all`), then the
same runs (same seed, so the same data and draws) under each disturbance
alone, without the built-in baseline (the undisturbed runs above are it):

  straggler  one rank (5) whose local compute (the P100 profile's kernels) is 2x slower
  noise      1% of every rank's time in periodic 100 us detours
  nic        rank 5's link to its router at 1/3 of its bandwidth (one lane of three)
  link       one green (router-to-router, within a chassis) link, drawn with the seed, at 1/3

Then one table: each algorithm's undisturbed time per iteration, its slowdown
under each disturbance, and for the straggler the phase that grew most and
the rank summary.json names as critical in it; and iteration by iteration for
algorithms whose iterations differ (Ok-Topk recomputes its threshold exactly
in iteration 0 and reuses it after).

usage: bench/disturbances.py [--build build] [--ranks 64,256] [--workload bert] [--iters 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

DISTURBANCES = [
    ("straggler", ["--straggler-ranks", "5", "--straggler-factor", "2"]),
    ("noise", ["--noise", "0.01", "--noise-length", "1e-4", "--noise-kind", "periodic"]),
    ("nic", ["--degrade-nic", "5", "--degrade-bw", "0.3333333333"]),
    ("link", ["--degrade-links", "green", "--degrade-count", "1", "--degrade-bw", "0.3333333333"]),
]


def summaries(d):
    out = {}
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name, "summary.json")
        if os.path.exists(p):
            with open(p) as f:
                out[name] = json.load(f)
    return out


def phase_means(s):
    ph = {}
    for it in s["iterations"]:
        for name, x in it["phases"].items():
            ph[name] = ph.get(name, 0) + x["time_s"] / len(s["iterations"])
    return ph


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--workload", default="bert")
    ap.add_argument("--iters", default="2")
    ap.add_argument("--device", default="p100")
    ap.add_argument("--out", default=None, help="keep the runs here (default: a temporary folder)")
    ap.add_argument("--reuse", action="store_true", help="tabulate runs already in --out")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="sparsim-disturb-")
    base_cmd = [os.path.join(a.build, "sparsim"), "run", "--algo", "all", "--platform", "daint-simgrid", "--workload",
                a.workload, "--payload", "model", "--device", a.device, "--iters", a.iters, "--no-trace", "--no-csv",
                "--quiet", "--no-disturb-baseline"]
    table, per_iter = [], []
    for P in a.ranks.split(","):
        runs = {}
        for name, extra in [("undisturbed", [])] + DISTURBANCES:
            d = os.path.join(out, "P%s" % P, name)
            cmd = base_cmd + ["--ranks", P, "--out", d] + extra
            if not (a.reuse and os.path.exists(os.path.join(d, "comparison.csv"))):
                t0 = time.time()
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    sys.exit("failed (%s): %s" % (" ".join(cmd), r.stderr))
                print("P=%s %s: %.0f s wall" % (P, name, time.time() - t0), file=sys.stderr)
            runs[name] = summaries(d)
        for algo, s0 in runs["undisturbed"].items():
            t0 = s0["time_per_iter_s"]["mean"]
            row = [int(P), algo, t0]
            for name, _ in DISTURBANCES:
                row.append(runs[name][algo]["time_per_iter_s"]["mean"] / t0)
            s1 = runs["straggler"][algo]
            p0, p1 = phase_means(s0), phase_means(s1)
            grew = max(p1, key=lambda k: p1[k] - p0.get(k, 0))
            crit = set()
            for it in s1["disturbance"]["iterations"]:
                c = it["phases"].get(grew, {}).get("critical_rank", -1)
                if c >= 0:
                    crit.add(c)
            row.append("%s +%.3g s (critical: rank %s)" % (grew, p1[grew] - p0.get(grew, 0),
                                                            ",".join(str(c) for c in sorted(crit)) or "-"))
            table.append(row)
            t_it = [it["time_s"] for it in s0["iterations"]]
            if max(t_it) > 1.2 * min(t_it):  # iterations of different kinds (Ok-Topk: recompute, reuse)
                for i, t in enumerate(t_it):
                    per_iter.append([int(P), algo, s0["iterations"][i]["iter"], t] +
                                    [runs[name][algo]["iterations"][i]["time_s"] / t for name, _ in DISTURBANCES])
    print("| P | algorithm | undisturbed (s/iter) | one straggler x2 | 1% noise | one NIC at 1/3 | one green link at 1/3 "
          "| straggler: phase that grew most |")
    print("|---|---|---|---|---|---|---|---|")
    for r in table:
        print("| %d | %s | %.4g | %.3f | %.3f | %.3f | %.3f | %s |" % tuple(r))
    if per_iter:
        print()
        print("| P | algorithm | iteration | undisturbed (s) | one straggler x2 | 1% noise | one NIC at 1/3 | "
              "one green link at 1/3 |")
        print("|---|---|---|---|---|---|---|---|")
        for r in per_iter:
            print("| %d | %s | %d | %.4g | %.3f | %.3f | %.3f | %.3f |" % tuple(r))


if __name__ == "__main__":
    main()
