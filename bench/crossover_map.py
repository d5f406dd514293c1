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
--oktopk-steady: 2 iterations average one exact recompute and one reuse).
The rows go to DIR/sweep-PLATFORM-MODEL.csv (kept: --resume reruns only what
is missing); then DIR/map.csv (one row per cell), DIR/crossover.md (the
tables) and DIR/map-PLATFORM.png (one heat map per platform, drawn by
notebooks/plot_scaling.py --map).

usage: bench/crossover_map.py [--sparsim build/sparsim] [--out bench/crossover]
           [--platforms LIST] [--models LIST] [--ranks LIST] [--jobs N] [--no-run]
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


def schemes(platform):
    nodes = platform not in ("1gbe", "daint")
    nvls = platform in ("dgx-h100", "roce", "roce-4to1")
    return (DENSE_NODES + (NVLS if nvls else []) if nodes else DENSE_FLAT) + SPARSE + (NODE_AWARE if nodes else [])


def sweep(sparsim, platform, model, ranks, jobs, out):
    name, device = PLATFORMS[platform]
    if "{nodes}" in name:  # a fixed leaf-spine for every P: as many nodes as the largest P needs
        name = name.format(nodes=max(ranks) // 8)
    path = os.path.join(out, "sweep-%s-%s.csv" % (platform, model))
    cmd = [sparsim, "sweep", "--algo", ",".join(schemes(platform)), "--ranks", ",".join(map(str, ranks)),
           "--platform", name, "--workload", model, "--payload", "model",
           "--iters", "2", "--device", device, "--train-model", model, "--overlap", "--jobs", str(jobs), "--out", path]
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
    """one row per (platform, model, P) of the sweeps [(csv, platform, model)]: the fastest scheme of
    each kind and the winner"""
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
        row = {"platform": plat, "model": model, "ranks": int(P), "winner": win.algo, "winner_kind": KIND[win.algo],
               "winner_s": win.time_per_iter_mean_s}
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
                "allreduce overlapped with the backward pass, and of the fastest sparse one.\n\n"
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
            f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sparsim", default=os.path.join(ROOT, "build", "sparsim"))
    ap.add_argument("--out", default=os.path.join(HERE, "crossover"))
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--models", default="vgg16,lstm,resnet50,bert,gpt2-xl")
    ap.add_argument("--ranks", default="8,16,32,64,128,256")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
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
    if a.no_run:
        sweeps = [(os.path.join(a.out, "sweep-%s-%s.csv" % (p, mo)), p, mo) for p in plats for mo in models]
        missing = [s for s, _, _ in sweeps if not os.path.exists(s)]
        if missing:
            print("crossover_map: --no-run, and %s is missing" % missing[0], file=sys.stderr)
            return 2
    else:
        sweeps = [(sweep(a.sparsim, p, mo, ranks, a.jobs, a.out), p, mo) for p in plats for mo in models]
    m = cells(sweeps)
    # the platforms and the models in the order asked for (the models from small to large by default)
    m["_p"], m["_m"] = m.platform.map(plats.index), m.model.map(models.index)
    m = m.sort_values(["_p", "_m", "ranks"]).drop(columns=["_p", "_m"])
    m.to_csv(os.path.join(a.out, "map.csv"), index=False)
    cmd = "bench/crossover_map.py --platforms %s --models %s --ranks %s" % (a.platforms, a.models, a.ranks)
    write_md(m, os.path.join(a.out, "crossover.md"), cmd)
    for p in plot_scaling.plot_map(m, a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
