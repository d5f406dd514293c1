#!/usr/bin/env python3
"""The simulator's speed: messages per wall second, and where the wall time goes.

Runs every algorithm at each P on each platform (BERT's n, model payloads,
2 iterations: issue 27's reference runs) as one sweep per platform, one run at a
time, and tabulates from the sweep's CSV what each run reports: wall time, peak
memory, messages, messages per wall second, and the shares of the ranks' time in
SimGrid's network model, the rest of SimGrid, sparsim and libraries
(docs/running.md).  --perf also runs one setting under `perf record` and holds
the built-in profile against perf's, classified the same way (perf sees the whole
process, start and writers included, so a few points apart is agreement).

usage: bench/sim_speed.py [--sparsim build/sparsim] [--platforms daint,1gbe]
                          [--ranks 64,256] [--algos ...] [--out bench/speed]
                          [--perf ALGO:P:PLATFORM]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ALGOS = "ring,recdoubling,rabenseifner,topka,gtopk,gaussiank,topkdsa,oktopk"
COMMON = ["--workload", "bert", "--payload", "model", "--iters", "2"]


def sweep(sparsim, platform, ranks, algos, out):
    csv_path = os.path.join(out, "speed-%s.csv" % platform)
    if os.path.exists(csv_path):
        os.remove(csv_path)
    cmd = [sparsim, "sweep", "--algo", algos, "--ranks", ranks, "--platform", platform, "--jobs", "1",
           "--out", csv_path] + COMMON
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def pct(v):
    return "-" if v in ("", None) else "%.0f%%" % (100 * float(v))


def table(rows):
    lines = ["| platform | P | algorithm | wall (s) | peak RSS (MiB) | messages | messages per wall s | "
             "network model | rest of SimGrid | sparsim | libraries |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append("| %s | %s | %s | %s | - | - | - | - | - | - | - |" % (r["platform"], r["ranks"], r["algo"],
                                                                          r["status"]))
            continue
        share = [r[c] for c in ("wall_share_model", "wall_share_engine", "wall_share_sparsim")]
        libs = 1 - sum(float(v) for v in share) if all(share) else None
        lines.append("| %s | %s | %s | %.1f | %.0f | %s | %s | %s | %s | %s | %s |" % (
            r["platform"], r["ranks"], r["algo"], float(r["wall_s"]), float(r["peak_rss_bytes"]) / 2**20,
            "{:,}".format(int(float(r["messages"]))), "{:,}".format(int(float(r["messages_per_wall_s"]))),
            pct(share[0]), pct(share[1]), pct(share[2]), pct(libs)))
    return "\n".join(lines)


def perf_check(sparsim, spec):
    """the built-in profile against perf's, for one run"""
    algo, P, platform = spec.split(":")
    tmp = tempfile.mkdtemp(prefix="sparsim-speed-")
    data = os.path.join(tmp, "perf.data")
    out = os.path.join(tmp, "run")
    subprocess.run(["perf", "record", "-q", "-F", "499", "-o", data, "--", sparsim, "run", "--algo", algo,
                    "--ranks", P, "--platform", platform, "--out", out, "--no-trace", "--no-csv", "--quiet"] + COMMON,
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        own = json.load(f)["wall_profile"]
    rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio",
                          "--percent-limit", "0"], capture_output=True, text=True, check=True).stdout
    got = {"network_model": 0.0, "engine": 0.0, "sparsim": 0.0, "libraries": 0.0}
    for line in rep.splitlines():
        parts = line.split()
        if len(parts) < 4 or not parts[0].endswith("%"):
            continue
        share, dso, sym = float(parts[0][:-1]) / 100, parts[1], " ".join(parts[3:])
        if dso == "sparsim":
            got["sparsim"] += share
        elif dso.startswith("libsimgrid"):
            got["network_model" if ("lmm::" in sym or "resource::" in sym) else "engine"] += share
        else:
            got["libraries"] += share
    print("\n%s at P = %s on %s: built-in profile against perf (shares of samples)" % (algo, P, platform))
    print("| class | built-in | perf |\n|---|---|---|")
    for k in got:
        print("| %s | %.1f%% | %.1f%% |" % (k, 100 * own[k], 100 * got[k]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sparsim", default="build/sparsim")
    ap.add_argument("--platforms", default="daint,1gbe")
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--algos", default=ALGOS)
    ap.add_argument("--out", default="bench/speed")
    ap.add_argument("--perf", metavar="ALGO:P:PLATFORM")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for platform in a.platforms.split(","):
        rows += sweep(a.sparsim, platform, a.ranks, a.algos, a.out)
    print(table(rows))
    if a.perf:
        perf_check(a.sparsim, a.perf)


if __name__ == "__main__":
    sys.exit(main())
