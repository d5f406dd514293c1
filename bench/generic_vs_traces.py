#!/usr/bin/env python3
"""The generic workload against the range of the recorded traces (the workload
issue, item 5's last target).

For each trace folder (grads.npy + layers.json, as traces/record_gradients.py
writes them) the statistics that decide sparse-allreduce volumes, from
`sparsim workload-stats`; then the generator's generic workload (or the one
--workload names) at each trace's n, ranks and iterations, the same statistics.
A statistic is in range when every generic value lies within the traces'
lowest / 1.25 and highest x 1.25; a row out of range is marked and says which
side it misses.

usage: bench/generic_vs_traces.py TRACE_DIR... [--build build] [--work DIR] [--workload generic]
       [--batch B] [--density 0.01] [--seed 1] [--markdown FILE] [--json FILE]
--batch gives the generator a batch per worker, and with it the workers' own
gradient scales (the generic workload has none without one: docs/workloads.md).
Statistics already in --work are not measured again.  Exit status 0 whether
or not rows miss (the table says which); 2 on bad arguments, 1 when a step fails.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traces_vs_generator import STATS, sh  # noqa: E402  (the statistics and their labels; a step)

# what section 22 adds (the workers' own gradient sizes) and the union's size at the traces' P
EXTRA = [("rank_log_sd", "sd of ln RMS over the ranks"),
         ("rank_max_over_min", "largest / smallest rank's RMS"),
         ("union_at_p", "union of the P local top-k sets / k, at the trace's P")]
SLACK = 1.25


def stats(path):
    s = json.load(open(path))
    u = s.get("union_over_k") or []
    s["union_at_p"] = u[-1] if u and s.get("union_p", [None])[-1] == s.get("ranks") else None
    return s


def value(s, key):
    v = s.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="generic-vs-traces")
    ap.add_argument("--workload", default="generic")
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--density", default="0.01")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--markdown", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    for t in a.traces:
        if not os.path.isfile(os.path.join(t, "grads.npy")):
            ap.error("%s: no grads.npy (a folder of traces/record_gradients.py)" % t)
    os.makedirs(a.work, exist_ok=True)
    real, gen = {}, {}
    base = [os.path.basename(os.path.normpath(t)) for t in a.traces]
    for t in a.traces:
        # a trace's name: its folder's, or with its parent's where two folders share a name
        parts = os.path.normpath(os.path.abspath(t)).split(os.sep)
        name = parts[-1] if base.count(parts[-1]) == 1 else "%s/%s" % tuple(parts[-2:])
        gen_name = a.workload + ("-b%d" % a.batch if a.batch else "")
        rp, gp = (os.path.join(a.work, "%s-%s.json" % (name.replace("/", "-"), s)) for s in ("trace", gen_name))
        if not os.path.exists(rp):
            sh([sparsim, "workload-stats", "--grad-file", t, "--density", a.density, "--json", rp])
        real[name] = stats(rp)
        r = real[name]
        if not os.path.exists(gp):
            sh([sparsim, "workload-stats", "--workload", a.workload, "--n", str(r["n"]), "--ranks", str(r["ranks"]),
                "--iters", str(r["iterations"]), "--density", a.density, "--seed", a.seed, "--json", gp]
               + (["--batch", str(a.batch)] if a.batch else []))
        gen[name] = stats(gp)
    names = list(real)
    shown = a.workload + (" with --batch %d" % a.batch if a.batch else "")
    out = ["| statistic | traces: lowest - highest | %s at the traces' shapes | in range (x/1.25 to x1.25) |"
           % shown, "|---|---|---|---|"]
    rows, miss = [], 0
    for key, label in STATS + EXTRA:
        tv = {n: value(real[n], key) for n in names}
        gv = {n: value(gen[n], key) for n in names}
        tv = {n: v for n, v in tv.items() if v is not None}
        gv = {n: v for n, v in gv.items() if v is not None}
        if not tv or not gv:
            continue
        lo_n, hi_n = min(tv, key=tv.get), max(tv, key=tv.get)
        lo, hi = tv[lo_n], tv[hi_n]
        glo, ghi = min(gv.values()), max(gv.values())
        below = glo < (lo / SLACK if lo >= 0 else lo * SLACK)
        above = ghi > (hi * SLACK if hi >= 0 else hi / SLACK)
        verdict = "yes" if not (below or above) else "**no**: %s" % " and ".join(
            s for s, b in (("under the lowest", below), ("over the highest", above)) if b)
        miss += below or above
        out.append("| %s | %.4g (%s) - %.4g (%s) | %.4g - %.4g | %s |" % (label.replace("|", "\\|"), lo, lo_n, hi, hi_n,
                                                                       glo, ghi, verdict))
        rows.append({"statistic": key, "label": label, "traces": tv, "generator": gv, "in_range": not (below or above)})
    out.append("")
    out.append("%d of %d statistics out of range." % (miss, len(rows)))
    text = "\n".join(out)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"workload": a.workload, "batch": a.batch, "slack": SLACK, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
