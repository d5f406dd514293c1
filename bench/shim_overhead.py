#!/usr/bin/env python3
"""Shim overhead: sparsim run against a raw SimGrid program sending the same messages.

For dense ring and TopkA at each P, runs side by side, interleaved, R times:
  raw      bench/raw_pattern (no shim: put_async/get_async/wait, nothing recorded)
  nocsv    sparsim run --payload size --no-csv --no-trace
  csv      sparsim run --payload size --no-trace      (messages.csv on)
and reports the median wall time, the peak RSS, and the ratios sparsim/raw.
The simulated times must agree (same messages on the same platform).

usage: bench/shim_overhead.py [--build build] [--ranks 1024,4096] [--reps 3] [--n 1048576] [--density 0.01]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def timed(cmd):
    """Runs cmd under GNU time; returns (wall s, peak RSS KiB, stdout)."""
    r = subprocess.run(["/usr/bin/time", "-f", "@@%e %M"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    m = re.search(r"@@([0-9.]+) ([0-9]+)", r.stderr)
    return float(m.group(1)), int(m.group(2)), r.stdout


def simulated(text):
    m = re.search(r"simulated(?: time per iteration:)? ([0-9.e+-]+) s", text)
    return float(m.group(1)) if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="1024,4096")
    ap.add_argument("--algos", default="ring,topka")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--topka-iters", type=int, default=20,
                    help="iterations of TopkA (one is too short to time against process start-up)")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    raw = os.path.join(a.build, "raw_pattern")
    tmp = tempfile.mkdtemp(prefix="sparsim-bench-")
    k = int(a.n * a.density)
    rows = []
    for P in [int(x) for x in a.ranks.split(",")]:
        plat = os.path.join(tmp, "p%d.xml" % P)
        with open(plat, "w") as f:
            subprocess.run([sparsim, "platform", "1gbe", "--ranks", str(P)], stdout=f, check=True)
        for algo in a.algos.split(","):
            iters = 1 if algo == "ring" else a.topka_iters
            if algo == "ring":
                if a.n % P:
                    sys.exit("--n must be a multiple of every P for the ring pattern")
                rawcmd = [raw, plat, "ring", str(P), str(4 * a.n // P), "lv08", str(iters)]
            else:
                rawcmd = [raw, plat, "bruck", str(P), str(8 * k), "lv08", str(iters)]
            base = [sparsim, "run", "--algo", algo, "--ranks", str(P), "--n", str(a.n), "--density",
                    str(a.density), "--iters", str(iters), "--payload", "size", "--no-trace", "--out",
                    os.path.join(tmp, "out")]
            cmds = {"raw": rawcmd, "nocsv": base + ["--no-csv"], "csv": base}
            res = {key: [] for key in cmds}
            sims = {}
            for rep in range(a.reps):
                for key, cmd in cmds.items():
                    w, rss, out = timed(cmd)
                    res[key].append((w, rss))
                    sims[key] = simulated(out)
                    print("P=%d %s %s rep %d: %.2f s, %d KiB" % (P, algo, key, rep, w, rss), file=sys.stderr)
            med = {key: statistics.median(x[0] for x in v) for key, v in res.items()}
            rss = {key: max(x[1] for x in v) for key, v in res.items()}
            if abs(sims["raw"] - sims["nocsv"]) > 1e-5 * sims["raw"]:
                print("WARNING: simulated times differ: raw %.9g, sparsim %.9g" % (sims["raw"], sims["nocsv"]),
                      file=sys.stderr)
            rows.append((P, "%s x%d" % (algo, iters), med, rss, sims["raw"], sims["nocsv"]))
    print("| P | algorithm x iterations | simulated s per iteration (raw / sparsim) | raw wall s | sparsim wall s, CSV off | ratio | "
          "sparsim wall s, CSV on | ratio | peak RSS MiB raw / off / on |")
    print("|---|---|---|---|---|---|---|---|---|")
    for P, algo, med, rss, s_raw, s_sp in rows:
        print("| %d | %s | %.6g / %.6g | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f / %.0f / %.0f |" % (
            P, algo, s_raw, s_sp, med["raw"], med["nocsv"], med["nocsv"] / med["raw"], med["csv"],
            med["csv"] / med["raw"], rss["raw"] / 1024, rss["nocsv"] / 1024, rss["csv"] / 1024))


if __name__ == "__main__":
    main()
