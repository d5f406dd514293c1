#!/usr/bin/env python3
"""Wall time of one sweep with --jobs 1 against --jobs J, side by side.

Runs the same sweep with each job count, interleaved (the order alternates
between repetitions, so that a slow spell of a shared machine falls on both),
and reports per repetition and as medians the wall time, the ratio and the
cores' use (user + system CPU seconds of the sweep's processes over wall
seconds); and checks that both give the same rows (wall columns aside).

usage: python3 bench/parallel_sweep.py [--build build] [--jobs 2] [--reps 3]
"""
import argparse
import csv
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SWEEP = ["sweep", "--algo", "ring,rabenseifner,topka,gtopk,gaussiank,oktopk,topkdsa", "--ranks", "16,32,64",
         "--n", "256K", "--iters", "2"]


def measured(column):
    """a column measured on the machine, not simulated (traces/sweep_columns.h)"""
    return "wall" in column or column == "peak_rss_bytes"



def one(sparsim, jobs, out):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([sparsim] + SWEEP + ["--jobs", str(jobs), "--out", out], capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("the sweep with --jobs %d failed: %s" % (jobs, p.stderr))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    with open(out, newline="") as f:
        rows = sorted(tuple((k, v) for k, v in r.items() if not measured(k)) for r in csv.DictReader(f))
    os.unlink(out)
    return wall, cpu, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    sparsim = os.path.abspath(os.path.join(a.build, "sparsim"))
    work = tempfile.mkdtemp(prefix="sparsim-bench-")
    print("sweep: sparsim %s" % " ".join(SWEEP))
    print("load average (1, 5, 15 min) at the start: %.2f %.2f %.2f on %d cores" % (os.getloadavg() + (os.cpu_count(),)))
    print("%-4s %12s %12s %8s %14s %14s" % ("rep", "jobs 1 (s)", "jobs %d (s)" % a.jobs, "ratio", "cores used 1",
                                          "cores used %d" % a.jobs))
    w1s, wjs, same = [], [], True
    for rep in range(a.reps):
        order = [1, a.jobs] if rep % 2 == 0 else [a.jobs, 1]
        got = {}
        for j in order:
            got[j] = one(sparsim, j, os.path.join(work, "s%d.csv" % j))
        same &= got[1][2] == got[a.jobs][2]
        w1s.append(got[1][0])
        wjs.append(got[a.jobs][0])
        print("%-4d %12.2f %12.2f %8.2f %14.2f %14.2f" % (rep + 1, got[1][0], got[a.jobs][0], got[1][0] / got[a.jobs][0],
                                                         got[1][1] / got[1][0], got[a.jobs][1] / got[a.jobs][0]))
    m1, mj = statistics.median(w1s), statistics.median(wjs)
    print("median %10.2f %12.2f %8.2f   (%d runs per sweep; rows identical: %s)" %
          (m1, mj, m1 / mj, len(got[1][2]), "yes" if same else "NO"))
    print("load average (1, 5, 15 min) at the end: %.2f %.2f %.2f on %d cores" % (os.getloadavg() + (os.cpu_count(),)))
    os.rmdir(work)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
