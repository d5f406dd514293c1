#!/usr/bin/env python3
"""--unshared-below against full bandwidth sharing: per phase, simulated time, and wall time (paper-scale issue).

Section 9's settings (BERT's layer table as a model workload, density 0.01, Ok-Topk's BERT preset, the Aries wiring
with one global link per pair of nodes (daint-static, where section 13's numbers were measured; --platform daint for
the spread routing), SMPI's network model without cross-traffic, the P100 profile, 100 settled iterations, then 2
simulated).

  check: each algorithm at each --ranks with n chosen so that a message of the P^2 pattern (k / P pairs of 8 bytes)
         has the size it has for BERT at --at-ranks, run twice (every message shared; messages below --below
         bypassing); prints per iteration and phase the simulated times and their ratio, and the wall times.
  scale: BERT's own n at each --ranks, messages below --below bypassing; prints wall time, peak memory, messages
         and messages per wall second, and each iteration's simulated time (Ok-Topk's first recomputes its
         thresholds, its second reuses them).

usage: bench/unshared.py check [--build build] [--ranks 256,512] [--at-ranks 4096] [--algos topkdsa,oktopk]
       bench/unshared.py scale [--build build] [--ranks 1024,2048,4096] [--algos topkdsa,oktopk]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

BERT_N = 133547324
DENSITY = 0.01


def run(B, platform, algo, P, n, below, out):
    cmd = [B, "run", "--algo", algo, "--ranks", str(P), "--n", str(n), "--platform", platform, "--workload", "bert",
           "--density", str(DENSITY), "--oktopk-preset", "bert", "--warmup", "0", "--payload", "model", "--settle",
           "100", "--iters", "2", "--network", "smpi", "--crosstraffic", "off", "--device", "p100",
           "--unshared-below", str(below), "--out", out, "--no-csv", "--no-trace", "--quiet"]
    rss = out + ".rss"
    t0 = time.time()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    with open(rss) as f:
        peak = int(f.read().split()[-1])  # KiB
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s, wall, peak


def check(B, a, tmp):
    print("| P | n | algorithm | iteration | phase | shared (s) | bypassing (s) | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    walls = []
    for P in a.ranks:
        n = BERT_N * P // a.at_ranks  # k / P pairs per message, as BERT's at --at-ranks
        for algo in a.algos:
            s0, w0, _ = run(B, a.platform, algo, P, n, 0, os.path.join(tmp, "s"))
            s1, w1, _ = run(B, a.platform, algo, P, n, a.below, os.path.join(tmp, "u"))
            for it in range(len(s0["iterations"])):
                for ph in s0["phases"]:
                    t0 = s0["iterations"][it]["phases"][ph]["time_s"]
                    t1 = s1["iterations"][it]["phases"][ph]["time_s"]
                    if t0 > 0 or t1 > 0:
                        print("| %d | %d | %s | %d | %s | %.4g | %.4g | %s |" % (
                            P, n, algo, it, ph, t0, t1, "%.3f" % (t1 / t0) if t0 > 0 else "-"))
            m0, m1 = s0["time_per_iter_s"]["mean"], s1["time_per_iter_s"]["mean"]
            print("| %d | %d | %s | mean | iteration | %.4g | %.4g | %.3f |" % (P, n, algo, m0, m1, m1 / m0))
            walls.append((P, algo, w0, w1))
            sys.stdout.flush()
    print()
    print("| P | algorithm | wall shared (s) | wall bypassing (s) | shared / bypassing |")
    print("|---|---|---|---|---|")
    for P, algo, w0, w1 in walls:
        print("| %d | %s | %.1f | %.1f | %.1f |" % (P, algo, w0, w1, w0 / w1))


def scale(B, a, tmp):
    print("| P | algorithm | wall (s) | peak RSS (MiB) | messages | messages per wall s "
          "| simulated s, iteration 0 / 1 |")
    print("|---|---|---|---|---|---|---|")
    for P in a.ranks:
        for algo in a.algos:
            s, wall, peak = run(B, a.platform, algo, P, BERT_N, a.below, os.path.join(tmp, "x"))
            print("| %d | %s | %.1f | %s | %d | %.0f | %s |" % (
                P, algo, wall, "%.0f" % (peak / 1024), s["messages"], s["messages"] / wall,
                " / ".join("%.4g" % it["time_s"] for it in s["iterations"])))
            sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["check", "scale"])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default=None)
    ap.add_argument("--at-ranks", type=int, default=4096)
    ap.add_argument("--algos", default="topkdsa,oktopk")
    ap.add_argument("--below", default="4K")
    ap.add_argument("--platform", default="daint-static")
    a = ap.parse_args()
    a.ranks = [int(x) for x in (a.ranks or ("256,512" if a.what == "check" else "1024,2048,4096")).split(",")]
    a.algos = a.algos.split(",")
    B = os.path.abspath(os.path.join(a.build, "sparsim"))
    with tempfile.TemporaryDirectory() as tmp:
        (check if a.what == "check" else scale)(B, a, tmp)


if __name__ == "__main__":
    main()
