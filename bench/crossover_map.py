#!/usr/bin/python3
"""The crossover map: on each platform, for each model and rank count, which
scheme is fastest (NCCL's dense allreduce or the dense MPI ones, a flat sparse
algorithm, a node-aware sparse form), by how much, and the training
throughput that gives with the platform's GPU.

It runs one `sparsim sweep` per (platform, model): BERT-size and larger
gradients as statistical model payloads (--payload model), 2 iterations,
every scheme of the platform, --train-model for whole iterations (backward
compute plus the allreduce; --overlap: a dense allreduce overlaps with the
backward pass layer by layer, as data-parallel training does, while a sparse
one selects after it, docs/training.md).  Ok-Topk and its node-aware
forms are taken at their steady state over tau' (notebooks/plot_scaling.py
--oktopk-steady: 2 iterations average one exact recompute and one reuse),
every run from a settled residual (--settle, 100 iterations by default).
The rows go to DIR/sweep-PLATFORM-MODEL.csv (kept: --resume reruns only what
is missing); then DIR/map.csv (one row per cell), DIR/crossover.md (the
tables) and DIR/map-PLATFORM.png (one heat map per platform, drawn by
notebooks/plot_scaling.py --map).

usage: bench/crossover_map.py [--sparsim build/sparsim] [--out bench/crossover]
           [--platforms LIST] [--models LIST] [--ranks LIST] [--jobs N] [--settle 100] [--no-run]
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "notebooks"))
import plot_scaling  # noqa: E402

# platform name in the sweep, its label, the device that prices compute (the
# platform's own GPU; 1gbe's is the gTop-k authors' P102, daint's the P100)
PLATFORMS = {
    "1gbe": ("1gbe", "p102"),
    "daint": ("daint", "p100"),
    "dgx-h100": ("dgx-h100", "h100"),
    "roce": ("roce", "h100"),
    "roce-4to1": ("roce:{nodes}:4", "h100"),
    "alps": ("alps", "gh200"),
}
DENSE_FLAT = ["ring", "rabenseifner", "recdoubling"]
DENSE_NODES = ["nccl-ring", "nccl-tree"]
NVLS = ["nccl-nvls"]  # where the nodes' NVSwitch reduces (not alps' GH200 nodes)
SPARSE = ["topka", "gtopk", "gaussiank", "topkdsa", "oktopk"]
NODE_AWARE = ["rail:topka", "rail:gtopk", "rail:oktopk", "leader:gtopk", "leader:oktopk"]
KIND = {a: kind for kind, algos in (("dense", DENSE_FLAT + DENSE_NODES + NVLS), ("sparse", SPARSE),
                                    ("node-aware", NODE_AWARE))
        for a in algos}


def has_nodes(platform):
    """a platform of multi-GPU nodes (NCCL's allreduces, the node-aware forms)"""
    return platform not in ("1gbe", "daint")


def schemes(platform, left_out=()):
    """the schemes of a platform, less those left out"""
    nodes = has_nodes(platform)
    nvls = platform in ("dgx-h100", "roce", "roce-4to1")
    every = (DENSE_NODES + (NVLS if nvls else []) if nodes else DENSE_FLAT) + SPARSE + (NODE_AWARE if nodes else [])
    return [a for a in every if a not in left_out]


# Rank counts from --flow-from up run on sparsim's flow engine (bench/README.md
# section 28: SimGrid's answers within 1% on 99 of 106 runs, at a fraction of
# its wall time), in sweeps of their own (sweep-PLATFORM-MODEL-flow*.csv).  It
# does not model NVLink SHARP, so nccl-nvls is not among them; and some schemes
# are left out above a rank count, each for the reason given here, which the
# tables repeat.  scheme: (left out above this P, on which platforms (None: all
# of them, "nodes": those of multi-GPU nodes, or a tuple), the (platform, model)
# cells where it is kept all the same, why)
LEFT_OUT = {
    "nccl-nvls": (0, None, (), "the flow engine does not model NVLink SHARP; across nodes it was never the fastest "
                               "(P = 16 to 256, every cell of section 21)"),
    "nccl-ring": (1024, None, (("alps", "gpt2-xl"),),
                  "2(P-1) steps of a latency each, against the tree's 2 log2(P/G): at P = 512 and 1024 slower than "
                  "nccl-tree in every cell but GPT-2 XL's, where they are within 7%; at P = 2048 on dgx-h100 slower "
                  "for BERT (9.0 ms against 3.9 ms) and for GPT-2 XL (44.3 ms against 41.2 ms, "
                  "check-nccl-ring-dgx-h100-gpt2-xl-2048.csv), while the tree's time hardly moves from 2048 to 4096 "
                  "(BERT: 3.94 to 4.00 ms); its simulation grows as P^2 x channels messages (3.3 minutes at "
                  "P = 2048). It is kept for GPT-2 XL on alps, where it was the fastest dense allreduce at every P "
                  "from 16 to 1024 (135.2 ms against the tree's 143.0 at 1024)"),
    "topkdsa": (1024, None, (), "never the fastest in any cell up to P = 1024, and P(P-1) messages an iteration "
                                "(94 s of wall time at P = 2048 on dgx-h100, check-dgx-h100-bert-2048.csv)"),
    "ring": (1024, ("1gbe",), (), "slower than Rabenseifner's allreduce in every cell from P = 8 to 1024 (by 0.1% at "
                                  "P = 8, by 2.5x at 1024 for VGG-16 and LSTM), since its 2(P-1) messages each pay "
                                  "LV08's latency where Rabenseifner's pay 2 log2 P; its simulation took 427 s at "
                                  "P = 2048"),
    # on daint and 1gbe the flat sparse schemes are the only sparse ones, and Ok-Topk wins there
    "oktopk": (1024, "nodes", (("dgx-h100", "gpt2-xl"), ("roce", "gpt2-xl"), ("roce-4to1", "gpt2-xl")),
               "on platforms of nodes its P - 1 rounds of small messages across the NICs put it behind "
               "rail:gtopk at P = 1024 by 1.7-2.0x for BERT and 3.9-12x for VGG-16, LSTM and ResNet-50 "
               "(at P = 2048 on dgx-h100, BERT: 11.4 ms in its steady state against 3.3 ms, 286 s of "
               "simulation, check-dgx-h100-bert-2048.csv); it is kept for GPT-2 XL on dgx-h100, roce and "
               "roce-4to1, where at P = 1024 it was the fastest scheme or within 6% of it"),
}

# options the flow engine's cells add on some platforms from a rank count up:
# (platforms, from this P, the tag in the sweep's file name, why)
EXTRA = {
    "--unshared-below 4K": (("1gbe", "daint"), 2048, "u4K",
                            "messages under 4 KB skip bandwidth sharing (bench/README.md section 13: Ok-Topk's and "
                            "TopkDSA's whole iterations within 1% of shared runs at their P = 4096 message sizes)"),
}


def left_out(platform, model, P, flow):
    """{scheme: why} of the schemes a cell leaves out"""
    out = {}
    for algo, (above, where, kept, why) in LEFT_OUT.items():
        on = where is None or (has_nodes(platform) if where == "nodes" else platform in where)
        if flow and P > above and on and algo in schemes(platform) and (platform, model) not in kept:
            out[algo] = why
    return out


def extra(platform, P, flow):
    """the options a cell adds: a list of the EXTRA keys"""
    return [o for o, (plats, frm, _, _) in EXTRA.items() if flow and platform in plats and P >= frm]


def sweep_path(out, platform, model, suffix=""):
    return os.path.join(out, "sweep-%s-%s%s.csv" % (platform, model, suffix))


def sweep(sparsim, platform, model, ranks, jobs, out, nodes, algos, suffix="", engine=None, opts=(), settle=100):
    """one sweep of the map (its CSV kept in OUT; --resume runs only what is missing); the path"""
    name, device = PLATFORMS[platform]
    if "{nodes}" in name:  # a fixed leaf-spine for every P: as many nodes as the largest P needs
        name = name.format(nodes=nodes)
    path = sweep_path(out, platform, model, suffix)
    cmd = [sparsim, "sweep", "--algo", ",".join(algos), "--ranks", ",".join(map(str, ranks)),
           "--platform", name, "--workload", model, "--payload", "model",
           "--iters", "2", "--device", device, "--train-model", model, "--overlap", "--settle", str(settle),
           "--jobs", str(jobs), "--out", path]
    if engine:
        cmd += ["--engine", engine]
    cmd += list(opts)
    if os.path.exists(path):
        if first_line(path) == sweep_columns(sparsim):
            cmd.append("--resume")
        else:  # written by a sparsim whose sweep CSV had other columns: --resume would refuse it
            print("crossover_map: %s has an older sparsim's columns; running its sweep again" % path, flush=True)
            os.remove(path)
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("crossover_map: the sweep failed (%s): %s" % (" ".join(cmd), r.stderr.strip()))
    return path


def first_line(path):
    with open(path) as f:
        return f.readline().strip()


_columns = {}


def sweep_columns(sparsim):
    """the header of the sweep CSV this sparsim writes (the 'columns:' line of `sparsim sweep --help`)"""
    if sparsim not in _columns:
        r = subprocess.run([sparsim, "sweep", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = [ln for ln in r.stdout.splitlines() if ln.startswith("columns: ")]
        if not lines:
            sys.exit("crossover_map: %s sweep --help names no columns" % sparsim)
        _columns[sparsim] = lines[0][len("columns: "):].strip()
    return _columns[sparsim]


# the models the map knows (sim/workload/paper_models.c holds their tables; a
# named model keeps its own n)
MODELS = ("vgg16", "lstm", "bert", "resnet20", "alexnet", "resnet50", "lstm-ptb", "gpt2-xl")


def cells(sweeps):
    """one row per (platform, model, P) of the sweeps [(csv or list of CSVs, platform, model)]: the
    fastest scheme of each kind and the winner; the engine the cell ran on, and the schemes it left out"""
    import pandas as pd
    parts = []
    for path, platform, model in sweeps:
        d = plot_scaling.load(path)
        d["map_platform"], d["map_model"] = platform, model
        parts.append(d)
    df = plot_scaling.oktopk_steady(pd.concat(parts, ignore_index=True))
    rows = []
    for (plat, model, P), g in df.groupby(["map_platform", "map_model", "ranks"]):
        best = {}
        for kind in ("dense", "sparse", "node-aware"):
            k = g[g.algo.map(KIND) == kind]
            if not k.empty:
                r = k.loc[k.time_per_iter_mean_s.idxmin()]
                best[kind] = r
        if "dense" not in best:
            continue
        win = min(best.values(), key=lambda r: r.time_per_iter_mean_s)
        d = best["dense"].time_per_iter_mean_s
        flow = g.settings.astype(str).str.contains(r"(?:^|;)engine=flow(?:;|$)").any()
        row = {"platform": plat, "model": model, "ranks": int(P), "winner": win.algo, "winner_kind": KIND[win.algo],
               "winner_s": win.time_per_iter_mean_s, "engine": "flow" if flow else "simgrid",
               "left_out": " ".join(sorted(left_out(plat, model, int(P), flow)))}
        for kind in ("dense", "sparse", "node-aware"):
            r = best.get(kind)
            row[kind] = r.algo if r is not None else ""
            row[kind + "_s"] = r.time_per_iter_mean_s if r is not None else ""
            row[kind + "_samples_per_s"] = r.samples_per_s if r is not None else ""
        sp = min([best[k].time_per_iter_mean_s for k in ("sparse", "node-aware") if k in best], default=None)
        row["sparse_speedup"] = d / sp if sp else ""
        row["winner_samples_per_s"] = win.samples_per_s
        sps = [best[k].samples_per_s for k in ("sparse", "node-aware") if k in best]
        row["train_ratio"] = max(sps) / best["dense"].samples_per_s if sps and best["dense"].samples_per_s else ""
        rows.append(row)
    return pd.DataFrame(rows)


def fmt_rate(x):
    x = float(x)
    return "%.3gM" % (x / 1e6) if x >= 1e6 else "%.3gk" % (x / 1e3) if x >= 1e3 else "%.3g" % x


def write_md(m, path, cmd):
    with open(path, "w") as f:
        f.write("# The crossover map\n\nGenerated by `%s` (bench/crossover_map.py); every cell is a simulated run "
                "of 2 iterations with model payloads (Ok-Topk's forms at their steady state over tau'). "
                "In each cell: the fastest allreduce, and in brackets the fastest sparse or node-aware scheme's "
                "speedup over the fastest dense one (below 1: dense wins); then the training throughput "
                "(samples per second over all GPUs, with the platform's GPU) of the fastest dense scheme, its "
                "allreduce overlapped with the backward pass, and of the fastest sparse one. A cell shown as - was "
                "not run (bench/README.md section 16 says why).\n\n"
                % cmd)
        for plat, g in m.groupby("platform", sort=False):
            Ps = sorted(g.ranks.unique())
            f.write("## %s\n\n| model | %s |\n|---|%s\n" % (plat, " | ".join("P = %d" % p for p in Ps),
                                                         "---|" * len(Ps)))
            for model, h in g.groupby("model", sort=False):
                cellv = []
                for p in Ps:
                    r = h[h.ranks == p]
                    if r.empty:
                        cellv.append("-")
                        continue
                    r = r.iloc[0]
                    sps = [r[k + "_samples_per_s"] for k in ("sparse", "node-aware") if r[k + "_samples_per_s"] != ""]
                    cellv.append("%s (x%.2f); %s / %s" % (r.winner, r.sparse_speedup, fmt_rate(r.dense_samples_per_s),
                                                           fmt_rate(max(sps)) if sps else "-"))
                f.write("| %s | %s |\n" % (model, " | ".join(cellv)))
            flowP = sorted(g[g.engine == "flow"].ranks.unique())
            if flowP:
                f.write("\nP = %s: on the flow engine (bench/README.md section 28).\n" % ", ".join(map(str, flowP)))
            gone = {}  # scheme: ({P}, {model})
            for _, r in g.iterrows():
                for algo in str(r.left_out).split() if isinstance(r.left_out, str) else []:
                    ps, ms = gone.setdefault(algo, (set(), set()))
                    ps.add(int(r.ranks))
                    ms.add(r.model)
            for algo, (ps, ms) in gone.items():
                which = "" if ms == set(g.model) else " (%s)" % ", ".join(x for x in g.model.unique() if x in ms)
                f.write("%s not run at P = %s%s: %s.\n" % (algo, ", ".join(map(str, sorted(ps))), which,
                                                          LEFT_OUT[algo][3]))
            for o, (_, _, _, why) in EXTRA.items():
                ps = sorted(P for P in flowP if o in extra(plat, P, True))
                if ps:
                    f.write("P = %s: with `%s`, %s.\n" % (", ".join(map(str, ps)), o, why))
            f.write("\n")


def plan(platform, model, ranks, flow_from):
    """the sweeps of one (platform, model): [(CSV suffix, ranks, schemes, engine, options)], one per
    set of schemes and options: SimGrid below flow_from, the flow engine from it up"""
    parts = []
    small = [P for P in ranks if P < flow_from]
    if small:
        parts.append(("", small, schemes(platform), None, []))
    groups = {}
    for P in (P for P in ranks if P >= flow_from):
        key = (tuple(sorted(left_out(platform, model, P, True))), tuple(extra(platform, P, True)))
        groups.setdefault(key, []).append(P)
    for (out, opts), rs in sorted(groups.items(), key=lambda g: min(g[1])):
        suffix = "-flow" + "".join("-no-" + x for x in out) + "".join("-" + EXTRA[o][2] for o in opts)
        parts.append((suffix, rs, schemes(platform, out), "flow", [w for o in opts for w in o.split()]))
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sparsim", default=os.path.join(ROOT, "build", "sparsim"))
    ap.add_argument("--out", default=os.path.join(HERE, "crossover"))
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--models", default="vgg16,lstm,resnet50,bert,gpt2-xl")
    ap.add_argument("--ranks", default="8,16,32,64,128,256")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--flow-from", type=int, default=512,
                    help="run the rank counts from this one up on the flow engine (--engine flow), leaving out the "
                         "schemes LEFT_OUT names above their rank counts (default: 512)")
    ap.add_argument("--settle", type=int, default=100,
                    help="iterations of local error feedback before the runs: a settled residual, as mid-training "
                    "(0: a cold one; a threshold reused right after it passes far more entries)")
    ap.add_argument("--no-run", action="store_true",
                    help="draw the map from the sweep CSVs already in --out, whichever sparsim wrote them; run nothing")
    a = ap.parse_args()
    plats, models = a.platforms.split(","), a.models.split(",")
    for p in plats:
        if p not in PLATFORMS:
            print("crossover_map: unknown platform '%s' (%s)" % (p, ", ".join(PLATFORMS)), file=sys.stderr)
            return 2
    for mo in models:
        if mo not in MODELS:
            print("crossover_map: unknown model '%s' (%s)" % (mo, ", ".join(MODELS)), file=sys.stderr)
            return 2
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
    except ValueError:
        print("crossover_map: --ranks must be a comma list of integers", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    sweeps = []
    for p in plats:
        for mo in models:
            parts = plan(p, mo, ranks, a.flow_from)
            paths = [sweep_path(a.out, p, mo, part[0]) for part in parts]
            if a.no_run:  # the map of the sweeps there are: a cell whose sweep was not run is left empty
                paths = [x for x in paths if os.path.exists(x)]
                if not paths:
                    print("crossover_map: --no-run, and %s has no sweep of %s on %s" % (a.out, mo, p), file=sys.stderr)
                    return 2
            else:
                for suffix, rs, algos, engine, opts in parts:
                    sweep(a.sparsim, p, mo, rs, a.jobs, a.out, max(rs) // 8, algos, suffix, engine, opts, a.settle)
            sweeps.append((paths, p, mo))
    m = cells(sweeps)
    # the platforms and the models in the order asked for (the models from small to large by default)
    m["_p"], m["_m"] = m.platform.map(plats.index), m.model.map(models.index)
    m = m.sort_values(["_p", "_m", "ranks"]).drop(columns=["_p", "_m"])
    m.to_csv(os.path.join(a.out, "map.csv"), index=False)
    cmd = "bench/crossover_map.py --platforms %s --models %s --ranks %s" % (a.platforms, a.models, a.ranks)
    if any(P >= a.flow_from for P in ranks):
        cmd += " --flow-from %d" % a.flow_from
    write_md(m, os.path.join(a.out, "crossover.md"), cmd)
    for p in plot_scaling.plot_map(m, a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
