#!/usr/bin/env python3
"""Two builds side by side: the same runs, their simulated times and their walls.

For a change that should make the simulator faster without changing its
answers.  Every algorithm (BERT's n, model payloads, 2 iterations, device none
unless --args says otherwise) runs with the build before and the build after,
one run at a time and alternating, on each platform and P; the table gives each
run's simulated time per iteration under both, their relative difference, and
the two walls with their ratio.  A wall is the run's own (summary.json
wall_seconds), so start-up and the writers are left out the same way for both;
the CPU seconds (user and system) and the peak memory are the whole process's,
its simulating child's included.

usage: bench/engine_ab.py --before OLD/sparsim --after build/sparsim
                          [--platforms dgx-h100,daint] [--ranks 256,1024]
                          [--algos all] [--args "--engine flow"]
                          [--label-before COMMIT] [--label-after COMMIT]
                          [--timeout S] --out DIR
Writes DIR/ab.csv and DIR/ab.md.
"""
import argparse
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading

COMMON = ["--workload", "bert", "--payload", "model", "--iters", "2", "--no-csv", "--no-trace", "--quiet"]


def algorithms(sparsim, algos):
    if algos != "all":
        return algos.split(",")
    out = subprocess.run([sparsim, "list"], check=True, capture_output=True, text=True).stdout
    names, inside = [], False
    for line in out.splitlines():
        if not line.startswith(" "):
            inside = line.startswith("algorithms")
        elif inside and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
    return names


def one(sparsim, algo, platform, ranks, extra, out, timeout):
    cmd = [sparsim, "run", "--algo", algo, "--ranks", str(ranks), "--platform", platform, "--out", out] + COMMON + extra
    # wait4 gives the run's CPU seconds and peak memory, its simulating child's included
    with tempfile.TemporaryFile(mode="w+") as errf:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf, text=True)
        timer = threading.Timer(timeout, p.kill) if timeout else None
        if timer:
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if timer:
            timer.cancel()
        errf.seek(0)
        err = errf.read()
    if timer and p.returncode == -9:
        print("  over %g s, stopped: %s" % (timeout, " ".join(cmd)), file=sys.stderr)
        return None
    if p.returncode != 0:
        print("  failed: %s: %s" % (" ".join(cmd), err.strip().splitlines()[-1:]), file=sys.stderr)
        return None
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return s["time_per_iter_s"]["mean"], s["wall_seconds"], s["messages"], ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the sparsim binary before the change")
    ap.add_argument("--after", default="build/sparsim", help="the sparsim binary after it")
    ap.add_argument("--platforms", default="dgx-h100,daint")
    ap.add_argument("--ranks", default="256")
    ap.add_argument("--algos", default="all", help="comma list, or all (sparsim list)")
    ap.add_argument("--args", default="--engine flow --device none", help="more arguments for every run")
    ap.add_argument("--label-before", default="before", help="what the table calls the build before (a commit)")
    ap.add_argument("--label-after", default="after", help="what it calls the build after")
    ap.add_argument("--timeout", type=float, default=None, help="stop a run after this many seconds (left out)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    extra = shlex.split(a.args)
    rows = []
    for platform in a.platforms.split(","):
        for ranks in a.ranks.split(","):
            for algo in algorithms(a.after, a.algos):
                tag = "%s-%s-%s" % (algo.replace(":", "_"), os.path.basename(platform).replace(":", "_"), ranks)
                b = one(a.before, algo, platform, ranks, extra, os.path.join(a.out, "runs", tag + "-before"), a.timeout)
                f = one(a.after, algo, platform, ranks, extra, os.path.join(a.out, "runs", tag + "-after"), a.timeout)
                if not b or not f:
                    continue
                diff = abs(f[0] - b[0]) / b[0] if b[0] else 0.0
                rows.append({"platform": platform, "ranks": ranks, "algo": algo, "messages": f[2],
                             "sim_before": b[0], "sim_after": f[0], "rel_diff": diff,
                             "wall_before": b[1], "wall_after": f[1],
                             "speedup": b[1] / f[1] if f[1] > 0 else float("inf"),
                             "cpu_before": b[3], "cpu_after": f[3], "peak_mb_before": b[4], "peak_mb_after": f[4]})
                r = rows[-1]
                print("%-12s %5s %-14s sim %.9g -> %.9g (%.1e)  wall %.2f -> %.2f s" %
                      (platform, ranks, algo, b[0], f[0], diff, b[1], f[1]), flush=True)
    with open(os.path.join(a.out, "ab.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()) if rows else ["platform"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.out, "ab.md"), "w") as fh:
        fh.write("Before: %s; after: %s; every run: `%s`.\n\n" % (a.label_before, a.label_after, " ".join(COMMON + extra)))
        fh.write("| platform | P | algorithm | messages | simulated s per iteration, before | after | difference "
                 "| wall before | wall after | speed-up | CPU s before | after | peak MB before | after |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            fh.write("| %s | %s | %s | %d | %.9g | %.9g | %.1e | %.2f s | %.2f s | %.2fx | %.2f | %.2f | %.0f | %.0f |\n" %
                     (r["platform"], r["ranks"], r["algo"], r["messages"], r["sim_before"], r["sim_after"],
                      r["rel_diff"], r["wall_before"], r["wall_after"], r["speedup"], r["cpu_before"], r["cpu_after"],
                      r["peak_mb_before"], r["peak_mb_after"]))
    worst = max((r["rel_diff"] for r in rows), default=0.0)
    print("%d runs, largest difference %.2e; %s" % (len(rows), worst, os.path.join(a.out, "ab.md")))


if __name__ == "__main__":
    main()
