#!/usr/bin/env python3
"""daint-simgrid (SimGrid's dragonfly, the earlier daint) against the Aries wiring, daint-static (one global link
per pair of nodes) and daint (traffic between groups spread over their global links): dense ring and Rabenseifner
allreduce across group boundaries, and TopkA, simulated time and wall time (fidelity issue, part 1).

Each platform, cm02 (alpha-beta with max-min sharing), device none, size-only payloads, n = 16M floats
(64 MiB; TopkA at density 0.01), one iteration; the ring up to --ring-max (its 2(P-1) steps of P messages
grow as P^2), the others at every P.  Prints one markdown table: per P and algorithm the simulated time on
each platform, daint's over daint-simgrid's, and each run's wall time.

usage: bench/aries.py [--build build] [--ranks 64,256,384,385,512,1024,2048] [--ring-max 1024]
                      [--algos ring,rabenseifner,topka] [--platforms daint-simgrid,daint-static,daint]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def run(B, algo, P, platform, out, payload="size", iters=1):
    """one run of sparsim B: (simulated time per iteration, wall time)"""
    cmd = [B, "run", "--algo", algo, "--ranks", str(P), "--n", "16M", "--density", "0.01", "--platform", platform,
           "--network", "cm02", "--device", "none", "--payload", payload, "--iters", str(iters), "--out", out,
           "--no-csv", "--no-trace", "--quiet"]
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
    ap.add_argument("--algos", default="ring,rabenseifner,topka")
    ap.add_argument("--platforms", default="daint-simgrid,daint-static,daint")
    a = ap.parse_args()
    B = os.path.abspath(os.path.join(a.build, "sparsim"))
    plats = a.platforms.split(",")
    ratio = "daint" in plats and "daint-simgrid" in plats  # a column of daint's time over daint-simgrid's
    print("| P | algorithm | " + " | ".join("%s (s)" % p for p in plats) +
          (" | daint / daint-simgrid" if ratio else "") + " | " + " | ".join("wall %s (s)" % p for p in plats) + " |")
    print("|---|---|" + "---|" * (2 * len(plats) + ratio))
    with tempfile.TemporaryDirectory() as tmp:
        for P in [int(x) for x in a.ranks.split(",")]:
            for algo in a.algos.split(","):
                if algo == "ring" and P > a.ring_max:
                    continue
                got = {p: run(B, algo, P, p, os.path.join(tmp, p)) for p in plats}
                row = "| %d | %s | " % (P, algo) + " | ".join("%.4g" % got[p][0] for p in plats)
                if ratio:
                    row += " | %.3f" % (got["daint"][0] / got["daint-simgrid"][0])
                print(row + " | " + " | ".join("%.2f" % got[p][1] for p in plats) + " |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
