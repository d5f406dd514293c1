#!/usr/bin/python3
"""bench/crossover_map.py on a small map (ResNet-20, P = 8 and 16, dgx-h100 and
1gbe, P = 16 on the flow engine with --flow-from 16, --settle 3): every run
starts from the residual asked for, every cell's winner is
the fastest of its sweep's rows, each kind's best is of that kind, the speedup
is the fastest dense time over the fastest sparse or node-aware one, the cells
from --flow-from up ran on the flow engine without the schemes it leaves out
(nccl-nvls), and the table and one PNG heat map per platform are written; an
unknown platform is refused with one line and exit 2.

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
import pandas as pd  # noqa: E402
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
                        "--models", "resnet20", "--ranks", "8,16", "--flow-from", "16", "--settle", "3", "--jobs", "2",
                        "--out", tmp],
                       capture_output=True, text=True)
    check(r.returncode == 0, "the map runs (%s)" % r.stderr.strip()[-300:])
    if r.returncode == 0:
        m = pd.read_csv(os.path.join(tmp, "map.csv"))
        check(len(m) == 4, "four cells (2 platforms x 2 rank counts): %d" % len(m))
        for plat in ("dgx-h100", "1gbe"):
            parts = crossover_map.plan(plat, "resnet20", [8, 16], 16)
            rows = plot_scaling.oktopk_steady(plot_scaling.load(
                [crossover_map.sweep_path(tmp, plat, "resnet20", suffix) for suffix, *_ in parts]))
            for P in (8, 16):
                c = m[(m.platform == plat) & (m.ranks == P)].iloc[0]
                g = rows[rows.ranks == P]
                gone = set(crossover_map.left_out(plat, "resnet20", P, P == 16))
                check(set(g.algo) == set(crossover_map.schemes(plat)) - gone,
                      "%s P=%d: every scheme of the platform ran but %s (%s)" %
                      (plat, P, sorted(gone), ",".join(sorted(set(g.algo)))))
                check(g.settings.astype(str).str.contains("settle=3;").all(),
                      "%s P=%d: every run from the residual --settle asked for" % (plat, P))
                check(c.engine == ("flow" if P == 16 else "simgrid") and
                      g.settings.astype(str).str.contains("engine=flow").all() == (P == 16),
                      "%s P=%d: ran on the %s engine" % (plat, P, c.engine))
                check(str(c.left_out if isinstance(c.left_out, str) else "") == " ".join(sorted(gone)),
                      "%s P=%d: the cell names what it left out (%r)" % (plat, P, c.left_out))
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
        check("nccl-nvls not run at P = 16: the flow engine does not model" in md and
              md.count("P = 16: on the flow engine") == 2, "crossover.md says what ran on the flow engine and what not")
    # the rules of LEFT_OUT by platform and model, and crossover.md naming the models a rule left out
    lo = crossover_map.left_out
    check("oktopk" in lo("dgx-h100", "bert", 2048, True) and "oktopk" not in lo("dgx-h100", "gpt2-xl", 2048, True)
          and "oktopk" in lo("alps", "gpt2-xl", 2048, True) and "oktopk" not in lo("dgx-h100", "bert", 1024, True)
          and "oktopk" not in lo("daint", "bert", 4096, True), "flat oktopk: left out past 1024 on nodes but where kept")
    check(set(lo("1gbe", "bert", 2048, True)) == {"ring", "topkdsa"} and "ring" not in lo("daint", "bert", 2048, True)
          and lo("1gbe", "bert", 2048, False) == {}, "the ring left out on 1gbe only; nothing on SimGrid")
    check([x[0] for x in crossover_map.plan("dgx-h100", "gpt2-xl", [1024, 2048], 512)] ==
          ["-flow-no-nccl-nvls", "-flow-no-nccl-nvls-no-nccl-ring-no-topkdsa"] and
          crossover_map.plan("dgx-h100", "bert", [2048], 512)[0][0] ==
          "-flow-no-nccl-nvls-no-nccl-ring-no-oktopk-no-topkdsa", "each set of left-out schemes its own sweep file")
    cells = [{"platform": "roce", "model": mo, "ranks": 2048, "winner": "rail:gtopk", "sparse_speedup": 1.2,
              "dense_samples_per_s": 1e6, "sparse_samples_per_s": 9e5, "node-aware_samples_per_s": 1.1e6,
              "engine": "flow", "left_out": " ".join(sorted(lo("roce", mo, 2048, True)))} for mo in ("bert", "gpt2-xl")]
    md_path = os.path.join(tmp, "rules.md")
    crossover_map.write_md(pd.DataFrame(cells), md_path, "test")
    md = open(md_path).read()
    check("oktopk not run at P = 2048 (bert): on platforms of nodes" in md and
          "nccl-ring not run at P = 2048: 2(P-1)" in md, "crossover.md names the models a rule left out")
    r = subprocess.run(["/usr/bin/python3", script, "--sparsim", SPARSIM, "--platforms", "nowhere", "--out",
                        os.path.join(tmp, "bad")], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and "nowhere" in lines[0] and not os.path.exists(
        os.path.join(tmp, "bad")), "an unknown platform: one line, exit 2, nothing written (%r)" % r.stderr)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("\n%d check(s) failed" % len(failures) if failures else "\nall checks passed")
sys.exit(1 if failures else 0)
