#!/usr/bin/python3
"""bench/crossover_map.py on a small map (ResNet-20, P = 8 and 16, dgx-h100 and
1gbe): every cell's winner is the fastest of its sweep's rows, each kind's best
is of that kind, the speedup is the fastest dense time over the fastest sparse
or node-aware one, and the table and one PNG heat map per platform are written;
an unknown platform is refused with one line and exit 2.

usage: test_crossover_map.py SPARSIM SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

SPARSIM, SRC = sys.argv[1:3]
sys.path.insert(0, os.path.join(SRC, "bench"))
sys.path.insert(0, os.path.join(SRC, "notebooks"))
import crossover_map  # noqa: E402
import plot_scaling  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


tmp = tempfile.mkdtemp(prefix="sparsim-test-map-")
try:
    script = os.path.join(SRC, "bench", "crossover_map.py")
    r = subprocess.run(["/usr/bin/python3", script, "--sparsim", SPARSIM, "--platforms", "dgx-h100,1gbe",
                        "--models", "resnet20", "--ranks", "8,16", "--jobs", "2", "--out", tmp],
                       capture_output=True, text=True)
    check(r.returncode == 0, "the map runs (%s)" % r.stderr.strip()[-300:])
    if r.returncode == 0:
        import pandas as pd
        m = pd.read_csv(os.path.join(tmp, "map.csv"))
        check(len(m) == 4, "four cells (2 platforms x 2 rank counts): %d" % len(m))
        for plat in ("dgx-h100", "1gbe"):
            rows = plot_scaling.oktopk_steady(plot_scaling.load(os.path.join(tmp, "sweep-%s-resnet20.csv" % plat)))
            check(set(rows.algo) == set(crossover_map.schemes(plat)),
                  "%s: every scheme of the platform ran (%s)" % (plat, ",".join(sorted(set(rows.algo)))))
            for P in (8, 16):
                c = m[(m.platform == plat) & (m.ranks == P)].iloc[0]
                g = rows[rows.ranks == P]
                fastest = g.loc[g.time_per_iter_mean_s.idxmin()]
                check(c.winner == fastest.algo and abs(c.winner_s - fastest.time_per_iter_mean_s) <= 1e-12,
                      "%s P=%d: the winner %s is the fastest row (%s)" % (plat, P, c.winner, fastest.algo))
                for kind in ("dense", "sparse", "node-aware"):
                    k = g[g.algo.map(crossover_map.KIND) == kind]
                    if k.empty:
                        check(not isinstance(c[kind], str) or c[kind] == "", "%s P=%d: no %s scheme" %
                              (plat, P, kind))
                        continue
                    check(c[kind] == k.loc[k.time_per_iter_mean_s.idxmin()].algo,
                          "%s P=%d: the best %s scheme is %s" % (plat, P, kind, c[kind]))
                sparse = [c[k + "_s"] for k in ("sparse", "node-aware") if c[k + "_s"] == c[k + "_s"]]
                want = c.dense_s / min(float(x) for x in sparse)
                check(abs(c.sparse_speedup - want) <= 1e-9 * want, "%s P=%d: speedup %.4f = dense %.4g / sparse" %
                      (plat, P, c.sparse_speedup, c.dense_s))
            png = os.path.join(tmp, "map-%s.png" % plat)
            check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "%s heat map" % png)
        md = open(os.path.join(tmp, "crossover.md")).read()
        check("## dgx-h100" in md and "## 1gbe" in md and "| resnet20 |" in md, "crossover.md has both tables")
    r = subprocess.run(["/usr/bin/python3", script, "--sparsim", SPARSIM, "--platforms", "nowhere", "--out",
                        os.path.join(tmp, "bad")], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and "nowhere" in lines[0] and not os.path.exists(
        os.path.join(tmp, "bad")), "an unknown platform: one line, exit 2, nothing written (%r)" % r.stderr)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("\n%d check(s) failed" % len(failures) if failures else "\nall checks passed")
sys.exit(1 if failures else 0)
