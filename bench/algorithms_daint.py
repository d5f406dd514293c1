#!/usr/bin/env python3
"""All algorithms side by side on Piz Daint's dragonfly (Ok-Topk issue; exact payloads by default).

For each P, one `sparsim run --algo all` (every algorithm in its own process),
then one table: time per iteration (mean over iterations), its phases, the
largest bytes per rank, the volume as the bounds count it and its ratio to
the algorithm's bound, and Ok-Topk's realized ratio to 6k(P-1)/P.

usage: bench/algorithms_daint.py [--build build] [--ranks 16,32,64,128,256] [--n 262144]
                                 [--density 0.01] [--iters 8] [--device p100] [--network smpi]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="16,32,64,128,256")
    ap.add_argument("--n", default="262144", help="gradient length, or 'none' to take the workload's or trace's")
    ap.add_argument("--payload", default="exact", help="exact, or model for sizes exact mode cannot hold")
    ap.add_argument("--density", default="0.01")
    ap.add_argument("--iters", default="8")
    ap.add_argument("--device", default="p100")
    ap.add_argument("--network", default="smpi")
    ap.add_argument("--algos", default="all")
    ap.add_argument("--out", default=None, help="keep the runs here (default: a temporary folder)")
    ap.add_argument("--extra", default="", help="more options for sparsim run, space-separated")
    ap.add_argument("--reuse", action="store_true", help="tabulate runs already in --out instead of running them")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="sparsim-daint-")
    rows = []
    for P in a.ranks.split(","):
        d = os.path.join(out, "P%s" % P)
        cmd = [os.path.join(a.build, "sparsim"), "run", "--algo", a.algos, "--ranks", P, "--platform", "daint-simgrid",
               "--network", a.network, "--device", a.device, "--density", a.density, "--iters",
               a.iters, "--payload", a.payload, "--no-trace", "--no-csv", "--out", d, "--quiet"] + a.extra.split()
        if a.n != "none":
            cmd += ["--n", a.n]
        if not (a.reuse and os.path.exists(os.path.join(d, "comparison.csv"))):
            t0 = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("failed (%s): %s" % (" ".join(cmd), r.stderr))
            print("P=%s: %.0f s wall" % (P, time.time() - t0), file=sys.stderr)
        with open(os.path.join(d, "comparison.csv")) as f:
            for row in csv.DictReader(f):
                with open(os.path.join(d, row["algo"], "summary.json")) as g:
                    s = json.load(g)
                phases = {}
                for it in s["iterations"]:
                    for name, ph in it["phases"].items():
                        phases[name] = phases.get(name, 0) + ph["time_s"] / len(s["iterations"])
                ok = ""
                if row["algo"] == "oktopk":
                    k = s["k"]
                    Pn = int(P)
                    bound6 = 6 * k * (Pn - 1) / Pn * 4
                    vols = [it["volume_bytes"] - it["phases"].get("counts", {}).get("volume_bytes", 0)
                            for it in s["iterations"] if not it.get("stats", {}).get("recompute", {}).get("max")]
                    if vols:
                        ok = "%.2f" % (sum(vols) / len(vols) / bound6)
                rows.append((int(P), row["algo"], float(row["time_per_iter_s"]), phases,
                             float(row["sent_bytes_max"]), float(row["volume_bytes"]), float(row["bound_ratio"]), ok))
    print("| P | algorithm | time/iter (s) | phases (s, mean per iteration) | max bytes sent/rank | "
          "volume/iter (B) | volume/bound | Ok-Topk vol / 6k(P-1)/P (reuse iters) |")
    print("|---|---|---|---|---|---|---|---|")
    for P, algo, t, ph, sent, vol, ratio, ok in rows:
        phs = ", ".join("%s %.3g" % (k, v) for k, v in sorted(ph.items(), key=lambda x: -x[1]) if v > 0)
        print("| %d | %s | %.4g | %s | %.0f | %.0f | %.3f | %s |" % (P, algo, t, phs, sent, vol, ratio, ok))


if __name__ == "__main__":
    main()
