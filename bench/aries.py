#!/usr/bin/env python3
"""daint-simgrid (SimGrid's dragonfly, the earlier daint) against daint (wired as Aries is): dense ring and Rabenseifner
allreduce across group boundaries, simulated time and wall time (fidelity issue, part 1).

Both platforms, cm02 (alpha-beta with max-min sharing), device none, size-only payloads, n = 16M floats
(64 MiB), one iteration; the ring up to --ring-max (its 2(P-1) steps of P messages grow as P^2),
Rabenseifner at every P.  Prints one markdown table: per P and algorithm the simulated time on each
platform, their ratio, and each run's wall time.

usage: bench/aries.py [--build build] [--ranks 64,256,384,385,512,1024,2048] [--ring-max 1024]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def run(B, algo, P, platform, out):
    cmd = [B, "run", "--algo", algo, "--ranks", str(P), "--n", "16M", "--platform", platform, "--network", "cm02",
           "--device", "none", "--payload", "size", "--out", out, "--no-csv", "--no-trace", "--quiet"]
    t0 = time.time()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["time_per_iter_s"]["mean"], wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="64,256,384,385,512,1024,2048")
    ap.add_argument("--ring-max", type=int, default=1024)
    a = ap.parse_args()
    B = os.path.abspath(os.path.join(a.build, "sparsim"))
    print("| P | algorithm | daint-simgrid (s) | daint (s) | daint / daint-simgrid | wall daint-simgrid (s) | wall daint (s) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for P in [int(x) for x in a.ranks.split(",")]:
            for algo in ("ring", "rabenseifner"):
                if algo == "ring" and P > a.ring_max:
                    continue
                t0, w0 = run(B, algo, P, "daint-simgrid", os.path.join(tmp, "d"))
                t1, w1 = run(B, algo, P, "daint", os.path.join(tmp, "a"))
                print("| %d | %s | %.4g | %.4g | %.3f | %.2f | %.2f |" % (P, algo, t0, t1, t1 / t0, w0, w1))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
