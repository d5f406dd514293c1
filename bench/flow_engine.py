#!/usr/bin/env python3
"""The flow engine against SimGrid: the same simulated times, how much faster.

For every algorithm, P and platform asked, runs `sparsim run` twice, one run
after the other: --engine simgrid (every message a SimGrid activity) and
--engine flow (sparsim's own event loop with the same network model), on
BERT's n with model payloads and 2 iterations (issue 27's reference runs),
and tabulates the simulated time per iteration of both and their ratio, the
messages, the wall time of both and the speedup.  A SimGrid run that passes
--cap seconds is stopped and marked "over CAP s": the check holds where both
finish.  Writes flow-engine.csv and flow-engine.md into --out.

usage: bench/flow_engine.py [--build build] [--platforms daint,1gbe,bench/platforms/fat-tree-1024.xml]
                            [--ranks 64,256,1024] [--algos ...] [--cap 300] [--out bench/flow]
       bench/flow_engine.py --table-from CSV [--out DIR]   (the table again from a CSV)
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

ALGOS = "ring,recdoubling,rabenseifner,topka,gtopk,gaussiank,topkdsa,oktopk,onebit,qgz,powersgd,zen,spardl"
COMMON = ["--workload", "bert", "--payload", "model", "--iters", "2", "--no-trace", "--no-csv", "--quiet"]


def run(sparsim, engine, algo, ranks, platform, cap, tmp):
    out = os.path.join(tmp, "%s-%s-%s" % (engine, algo, ranks))
    cmd = [sparsim, "run", "--algo", algo, "--ranks", str(ranks), "--platform", platform, "--engine", engine,
           "--out", out] + COMMON
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=cap if cap > 0 else None)
    except subprocess.TimeoutExpired:
        return {"status": "over %d s" % cap}
    wall = time.monotonic() - t0
    if p.returncode != 0:
        return {"status": "failed: " + p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return {"status": "ok", "time": s["time_per_iter_s"]["mean"], "messages": s["messages"],
            "wall": s.get("wall_seconds", wall), "process_wall": wall}


def fmt_wall(r):
    return "%.2f" % r["wall"] if r["status"] == "ok" else r["status"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--platforms", default="daint,1gbe,bench/platforms/fat-tree-1024.xml")
    ap.add_argument("--ranks", default="64,256,1024")
    ap.add_argument("--algos", default=ALGOS)
    ap.add_argument("--cap", type=int, default=300, help="seconds a SimGrid run may take (0: no cap)")
    ap.add_argument("--out", default="bench/flow")
    ap.add_argument("--table-from", metavar="CSV", help="only write flow-engine.md (into --out) from this CSV")
    a = ap.parse_args()
    if a.table_from:
        os.makedirs(a.out, exist_ok=True)
        write_table(rows_from_csv(a.table_from), os.path.join(a.out, "flow-engine.md"))
        return
    sparsim = os.path.join(a.build, "sparsim")
    if not os.access(sparsim, os.X_OK):
        sys.exit("flow_engine.py: no sparsim in %s (build it first)" % a.build)
    os.makedirs(a.out, exist_ok=True)
    csv_path = os.path.join(a.out, "flow-engine.csv")
    fields = ["platform", "ranks", "algo", "messages", "simgrid_time_s", "flow_time_s", "ratio", "simgrid_wall_s",
              "flow_wall_s", "speedup", "simgrid_status", "flow_status"]
    with tempfile.TemporaryDirectory() as tmp, open(csv_path, "w", newline="") as fcsv:
        w = csv.DictWriter(fcsv, fieldnames=fields)
        w.writeheader()
        for platform in a.platforms.split(","):
            for ranks in [int(x) for x in a.ranks.split(",")]:
                for algo in a.algos.split(","):
                    sg = run(sparsim, "simgrid", algo, ranks, platform, a.cap, tmp)
                    fl = run(sparsim, "flow", algo, ranks, platform, 0, tmp)
                    row = {"platform": os.path.basename(platform), "ranks": ranks, "algo": algo,
                           "simgrid_status": sg["status"], "flow_status": fl["status"]}
                    if fl["status"] == "ok":
                        row.update(messages=fl["messages"], flow_time_s=fl["time"], flow_wall_s=fl["wall"])
                    if sg["status"] == "ok":
                        row.update(simgrid_time_s=sg["time"], simgrid_wall_s=sg["wall"])
                    if sg["status"] == "ok" and fl["status"] == "ok":
                        row.update(ratio=fl["time"] / sg["time"], speedup=sg["wall"] / fl["wall"])
                    w.writerow(row)
                    fcsv.flush()
                    print("%s P=%d %s: simgrid %s, flow %s%s" % (
                        row["platform"], ranks, algo, fmt_wall(sg), fmt_wall(fl),
                        ", ratio %.6f" % row["ratio"] if "ratio" in row else ""), flush=True)
    write_table(rows_from_csv(csv_path), os.path.join(a.out, "flow-engine.md"))


def rows_from_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_table(rows, path):
    """flow-engine.md from the CSV's rows: times, their ratio, walls, messages per wall second"""
    def num(v, f):
        return f % float(v) if v not in ("", None) else "-"
    lines = ["| platform | P | algorithm | messages | simulated s per iteration: SimGrid | flow | flow / SimGrid | "
             "wall s: SimGrid | flow | speedup | messages per wall s: SimGrid | flow |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        msgs = float(r["messages"]) if r["messages"] else None
        sg_ok, fl_ok = r["simgrid_status"] == "ok", r["flow_status"] == "ok"
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["platform"], r["ranks"], r["algo"], "{:,}".format(int(msgs)) if msgs else "-",
            num(r["simgrid_time_s"], "%.6g") if sg_ok else "-", num(r["flow_time_s"], "%.6g") if fl_ok else r["flow_status"],
            num(r["ratio"], "%.4f"), num(r["simgrid_wall_s"], "%.2f") if sg_ok else r["simgrid_status"],
            num(r["flow_wall_s"], "%.2f") if fl_ok else "-", num(r["speedup"], "%.1fx"),
            "{:,.0f}".format(msgs / float(r["simgrid_wall_s"])) if sg_ok and msgs else "-",
            "{:,.0f}".format(msgs / float(r["flow_wall_s"])) if fl_ok and msgs else "-"))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
