#!/usr/bin/env python3
"""Every algorithm at a paper's n on daint, from hundreds to thousands of ranks.

For each P and algorithm, runs `sparsim run` on the model workload (the
built-in profile, --payload model; dense algorithms need no data) for the
chosen iterations (default --iters-at 0,1: Ok-Topk's iteration 0 computes
its thresholds and gathers every reduced entry, iteration 1 reuses them as
most iterations of a long run do; --iters-at "" with --settle S --iters I
simulates I iterations after S settling ones, whose model steps cost about
20 ms each at any P), and records per simulated iteration the
wall time, the peak resident memory of the run, the messages and messages
per second, and the simulated time.  With --replay-up-to P0, runs up to P0
also write messages.csv and `raw_replay` (bench/raw_replay.c: the same
messages, started at the same simulated times, in bare SimGrid) moves them
beside sparsim, for the ratio of the two wall times.

usage: bench/paper_scale.py [--build build] [--workload bert] [--ranks 256,1024,2048,4096]
       [--algos all] [--iters-at 0,1 | --iters-at "" --settle S --iters I] [--replay-up-to 1024] [--density 0.01]
       [--extra "more sparsim run options"] [--markdown FILE]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ALL = ["ring", "recdoubling", "rabenseifner", "topka", "gtopk", "gaussiank", "topkdsa", "oktopk"]


def timed(cmd, stdout=subprocess.DEVNULL):
    """wall seconds and peak RSS (MiB) of one child"""
    t = time.time()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - t
    err = p.stderr.read()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), err))
    return wall, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--workload", default="bert")
    ap.add_argument("--ranks", default="256,1024,2048,4096")
    ap.add_argument("--algos", default="all")
    ap.add_argument("--settle", default="0")
    ap.add_argument("--iters", default="2")
    ap.add_argument("--iters-at", default="0,1")
    ap.add_argument("--extra", default="", help="more options for sparsim run, space-separated")
    ap.add_argument("--replay-up-to", type=int, default=1024)
    ap.add_argument("--density", default="0.01")
    ap.add_argument("--platform", default="daint-simgrid")
    ap.add_argument("--markdown", default="")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    replay = os.path.join(a.build, "raw_replay")
    algos = ALL if a.algos == "all" else a.algos.split(",")
    its = ["--iters-at", a.iters_at] if a.iters_at else ["--settle", a.settle, "--iters", a.iters]
    nit = len(a.iters_at.split(",")) if a.iters_at else int(a.iters)
    tmp = tempfile.mkdtemp(prefix="sparsim-scale-")
    lines = ["| P | algorithm | sim. time per iteration (s) | messages per iteration | wall s per iteration | "
             "peak RSS MiB | messages/s | raw SimGrid wall s per iteration | sparsim/raw |",
             "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for P in [int(x) for x in a.ranks.split(",")]:
        plat = os.path.join(tmp, "p%d.xml" % P)
        with open(plat, "w") as f:
            subprocess.run([sparsim, "platform", a.platform, "--ranks", str(P)], stdout=f, check=True)
        for algo in algos:
            out = os.path.join(tmp, "%s-%d" % (algo, P))
            with_csv = P <= a.replay_up_to
            cmd = [sparsim, "run", "--algo", algo, "--ranks", str(P), "--workload", a.workload, "--density",
                   a.density, "--platform", a.platform, "--out", out, "--quiet", "--no-trace"] + its + a.extra.split() + \
                ([] if with_csv else ["--no-csv"])
            wall, rss = timed(cmd)
            with open(os.path.join(out, "summary.json")) as f:
                s = json.load(f)
            msgs = sum(i["messages"] for i in s["iterations"]) / nit
            sim = s["time_per_iter_s"]["mean"]
            raw = "-"
            ratio = "-"
            if with_csv:
                rw, _ = timed([replay, plat, os.path.join(out, "messages.csv"), str(P), s["config"]["network"]])
                raw = "%.2f" % (rw / nit)
                ratio = "%.2f" % (wall / rw)
                os.remove(os.path.join(out, "messages.csv"))
            row = "| %d | %s | %.4g | %.0f | %.2f | %.0f | %.0f | %s | %s |" % (
                P, algo, sim, msgs, wall / nit, rss, msgs * nit / wall, raw, ratio)
            lines.append(row)
            print(row, flush=True)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
