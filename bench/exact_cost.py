#!/usr/bin/env python3
"""The cost of exact payloads per element, two builds side by side.

Runs the dense ring with exact payloads (every rank's gradient generated,
reduced for real) and with size-only payloads (no data), interleaved, for
each binary given, and reports the CPU seconds the data costs per element
per iteration: (exact - size) / (P n iterations).  Before/after a change,
give the two builds' binaries, e.g. an older commit built in a worktree:

  git worktree add /tmp/before COMMIT && bash /tmp/before/scripts/build.sh /tmp/before/build
  python3 bench/exact_cost.py build/sparsim /tmp/before/build/sparsim

usage: bench/exact_cost.py SPARSIM [SPARSIM2 ...] [--ranks 64] [--n 4M] [--iters 2] [--reps 3]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def cpu(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), err))
    return ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--n", default="4M")
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    n = int(a.n[:-1]) * {"K": 1 << 10, "M": 1 << 20}[a.n[-1]] if a.n[-1] in "KM" else int(a.n)
    tmp = tempfile.mkdtemp(prefix="sparsim-exact-cost-")
    res = {b: {"exact": [], "size": []} for b in a.binaries}
    for _ in range(a.reps):
        for b in a.binaries:
            for mode in ("exact", "size"):
                res[b][mode].append(cpu([b, "run", "--algo", "ring", "--ranks", str(a.ranks), "--n", a.n, "--iters",
                                         str(a.iters), "--payload", mode, "--network", "cm02", "--out",
                                         os.path.join(tmp, mode), "--quiet", "--no-csv", "--no-trace"]))
    elems = a.ranks * n * a.iters
    print("| binary | exact CPU s | size-only CPU s | data ns per element per iteration |")
    print("|---|---|---|---|")
    per = {}
    for b in a.binaries:
        e, s = statistics.median(res[b]["exact"]), statistics.median(res[b]["size"])
        per[b] = (e - s) / elems * 1e9
        print("| %s | %.2f | %.2f | %.1f |" % (b, e, s, per[b]))
    if len(a.binaries) > 1:
        print("\n%s / %s: %.1fx" % (a.binaries[1], a.binaries[0], per[a.binaries[1]] / per[a.binaries[0]]))


if __name__ == "__main__":
    main()
