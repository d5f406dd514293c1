#!/usr/bin/python3
"""SparDL beside Ok-Topk and TopkDSA (the compressed-schemes issue, item 4).

BERT's gradient (n = 133,547,324) at density 0.01, model payloads, 2
iterations (their mean; Ok-Topk's two, an exact recompute and a reuse, at
its steady state over tau' = 128, (t0 + 127 t1) / 128, as bench/papers.py
and the crossover map take them; volumes are the two iterations' mean), on the
papers' platforms 1gbe (local kernels priced by p102) and daint (p100), at
P = 64 and 256: the MPI ring as the dense baseline, Ok-Topk, TopkDSA, and
SparDL with one team (d = 1) and with d = 4 teams.  Time per iteration of the
allreduce alone (selection included), the volume per rank as the bounds count
it, and the speedup over the ring.

usage: bench/spardl.py [--build build] [--work DIR] [--ranks 64,256] [--markdown FILE]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import tables  # noqa: E402  (the printed and written table)
sys.path.insert(0, os.path.join(ROOT, "notebooks"))
import pandas as pd  # noqa: E402
import plot_scaling  # noqa: E402  (Ok-Topk's steady state over tau')
PLATFORMS = [("1gbe", "p102"), ("daint", "p100")]
COLUMNS = ["ring", "oktopk", "topkdsa", "spardl", "spardl d=4"]


def sweep(sparsim, work, plat, device, ranks, algos, extra, name):
    out = os.path.join(work, "sweep-%s%s.csv" % (plat, name))
    cmd = [sparsim, "sweep", "--algo", algos, "--ranks", ranks, "--platform", plat, "--device", device,
           "--workload", "bert", "--payload", "model", "--iters", "2", "--jobs", "1", "--out", out] + extra
    if os.path.exists(out):
        cmd.append("--resume")
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("spardl: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
    return plot_scaling.oktopk_steady(pd.read_csv(out)).to_dict("records")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "spardl"))
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    lines = ["| platform | P | " + " | ".join("%s: s, x ring" % c for c in COLUMNS) + " | volume per rank, MB: "
             + " / ".join(COLUMNS) + " |", "|" + "---|" * (3 + len(COLUMNS))]
    for plat, device in PLATFORMS:
        rows = sweep(sparsim, a.work, plat, device, a.ranks, "ring,oktopk,topkdsa,spardl", [], "")
        rows += [dict(r, algo="spardl d=4") for r in
                 sweep(sparsim, a.work, plat, device, a.ranks, "spardl", ["--spardl-teams", "4"], "-d4")]
        for P in a.ranks.split(","):
            at = {r["algo"]: (float(r["time_per_iter_mean_s"]), float(r["volume_bytes"]) / 1e6)
                  for r in rows if str(r["ranks"]) == P}
            tr = at["ring"][0]
            cells = ["%.4g, %.2f" % (at[c][0], tr / at[c][0]) if c in at else "-" for c in COLUMNS]
            vols = " / ".join("%.1f" % at[c][1] if c in at else "-" for c in COLUMNS)
            lines.append("| %s | %s | %s | %s |" % (plat, P, " | ".join(cells), vols))
    return tables.emit(lines, a.markdown)


if __name__ == "__main__":
    sys.exit(main())
