#!/usr/bin/python3
"""The compressed schemes beside the dense baseline and the top-k schemes
(the compressed-schemes issue, item 7, for the schemes there are so far).

BERT's gradient (n = 133,547,324) at density 0.01, model payloads, 2
iterations (their mean; Ok-Topk's two are an exact recompute and a reuse,
taken at its steady state over tau', (t0 + (tau' - 1) t1) / tau', as the
crossover map and bench/papers.py take them), on the papers' platforms (1gbe, daint) and a
modern one (dgx-h100), at P = 64 and 256: the dense baseline (the MPI ring
on flat platforms, the faster of NCCL's ring and tree on nodes), Ok-Topk and gTop-k, the 1-bit
allreduce (onebit), the INT4 quantized one (qgz) and PowerSGD at rank 4
(powersgd: its two allreduces on the faster of the MPI ring and
Rabenseifner's on the flat platforms, of NCCL's ring and tree on DGX nodes;
BERT's tensors as matrices by the bias beside each weight, the embeddings
most nearly square, as sim/driver/layers.c says).  Local kernels priced by
p102 on 1gbe, p100 on daint, h100 on dgx-h100.  Time per iteration of
the allreduce alone, volume per rank, and the speedup over the dense one.
The accuracy each scheme costs is not simulated.

--no-devices prices no local kernel (device none everywhere): the
communication alone.  --schemes all runs every scheme sparsim has (the five
top-k ones, ZEN and SparDL beside the three compressed ones) and writes one
row per scheme; --figure draws their speedups over the dense baseline, a
panel per platform.  --train adds BERT's forward and backward on each
platform's device (--train-model bert, its default batch, no overlap) and
the training throughput: samples per second and its ratio to dense.

--setting papers replaces BERT at --ranks on the three platforms by the
papers' own settings (bench/papers.py's): gTop-k's testbed (1gbe, p102,
density 0.001, P = 32, its six models at its per-GPU batches) and Ok-Topk's
(daint, p100: BERT at P = 256 and density 1% with batch 8, VGG-16 at P = 32
and 2% with 16, the LSTM at P = 64 and 2% with 2); with --train the
throughput is at those batches.  The table gets the model and density.

usage: bench/compressed.py [--build build] [--work DIR] [--ranks 64,256] [--no-devices]
       [--schemes LIST|all] [--train] [--setting bert|papers] [--jobs 2] [--markdown FILE] [--figure FILE.png]
"""
import argparse
import math
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
# platform, its dense baseline(s), the device that prices local kernels, and
# the dense allreduces PowerSGD's factors try (the fastest kept): on the flat
# platforms MPI's ring and Rabenseifner's, which an MPI library would choose
# for PowerSGD's small vectors; on DGX nodes NCCL's two
PLATFORMS = [("1gbe", ["ring"], "p102", ["ring", "rabenseifner"]),
             ("daint", ["ring"], "p100", ["ring", "rabenseifner"]),
             ("dgx-h100", ["nccl-ring", "nccl-tree"], "h100", ["nccl-ring", "nccl-tree"])]
# the papers' settings (bench/papers.py): (testbed, platform, model, P, density, per-GPU batch)
PAPERS = [("gtopk", "1gbe", m, 32, 0.001, b) for m, b in
          [("vgg16", 32), ("resnet20", 32), ("alexnet", 256), ("resnet50", 64), ("lstm-ptb", 20), ("lstm", 8)]] + \
         [("oktopk", "daint", "bert", 256, 0.01, 8), ("oktopk", "daint", "vgg16", 32, 0.02, 16),
          ("oktopk", "daint", "lstm", 64, 0.02, 2)]
SCHEMES = ["oktopk", "gtopk", "onebit", "qgz", "powersgd"]
ALL = ["topka", "gtopk", "gaussiank", "topkdsa", "oktopk", "zen", "spardl", "onebit", "qgz", "powersgd"]


def draw(path, table, schemes, title):
    """speedup over the dense baseline per scheme: a panel per platform (and model), a group per P"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plats = list(dict.fromkeys(t[0] for t in table))
    cols = min(3, len(plats))
    rows = (len(plats) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(plats):]:
        ax.set_visible(False)
    for ax, plat in zip(axes.flat, plats):
        ps = [t for t in table if t[0] == plat]
        w = 0.8 / len(ps)
        for j, (_, P, at) in enumerate(ps):
            xs = [i + (j - (len(ps) - 1) / 2) * w for i in range(len(schemes))]
            ys = [at["dense"][0] / at[s][0] if s in at else 0 for s in schemes]
            ax.bar(xs, ys, w, label="P = %s" % P)
        ax.axhline(1, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(schemes)))
        ax.set_xticklabels(schemes, rotation=60, ha="right", fontsize=8)
        dense = "/".join(dict.fromkeys(t[2]["dense"][2] for t in ps)) or "-"
        one = " P = %s" % ps[0][1] if len(ps) == 1 else ""
        ax.set_title("%s%s (dense: %s)" % (plat, one, dense), fontsize=9)
        if len(ps) > 1:
            ax.legend(fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
    for r in range(rows):
        axes[r][0].set_ylabel("speedup over the dense allreduce")
    ys = [t[2]["dense"][0] / t[2][x][0] for t in table for x in schemes if x in t[2]]
    if ys:
        axes[0][0].set_ylim(min(ys) / 1.5, max(ys) * 1.5)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def cases(a):
    """what to run: one case per (platform, model, P list) with its sweep file"""
    if a.setting == "bert":
        return [dict(plat=plat, dense=dense, device=device, inners=inners, model="bert", density=None, ranks=a.ranks,
                     batch=None, name=plat, testbed=None) for plat, dense, device, inners in PLATFORMS]
    flat = {plat: (dense, device, inners) for plat, dense, device, inners in PLATFORMS}
    return [dict(plat=plat, dense=flat[plat][0], device=flat[plat][1], inners=flat[plat][2], model=model, density=d,
                 ranks=str(P), batch=b, name="%s-%s-%s-P%d" % (testbed, plat, model, P), testbed=testbed)
            for testbed, plat, model, P, d, b in PAPERS]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "compressed"))
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--no-devices", action="store_true", help="device none on every platform")
    ap.add_argument("--schemes", default=",".join(SCHEMES), help="comma-separated, or all")
    ap.add_argument("--setting", default="bert", choices=["bert", "papers"],
                    help="bert: BERT at --ranks on every platform; papers: the gTop-k and Ok-Topk papers' settings")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--train", action="store_true", help="training iterations of the model: samples per second too")
    ap.add_argument("--markdown")
    ap.add_argument("--figure")
    a = ap.parse_args()
    schemes = ALL if a.schemes == "all" else a.schemes.split(",")
    papers = a.setting == "papers"
    wide = len(schemes) <= 5 and not papers
    table = []
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    head = "| platform | model | density | P |" if papers else "| platform | P |"
    if wide:
        lines = ["| platform | P | dense baseline: s | " + " | ".join("%s: s, x dense" % s for s in schemes)
                 + " | volume per rank, MB: dense / " + " / ".join(schemes) + " |", "|" + "---|" * (4 + len(schemes))]
    else:
        lines = [head + " scheme | s per iteration | x dense | volume per rank, MB |"
                 + (" samples/s | x dense |" if a.train else ""),
                 "|---|---|" + ("---|---|" if papers else "") + "---|---|---|---|" + ("---|---|" if a.train else "")]
    for case in cases(a):
        plat, dense = case["plat"], case["dense"]
        rows = []
        # PowerSGD's allreduces on each of its dense algorithms (the first with the others)
        for i, inner in enumerate(case["inners"]):
            out = os.path.join(a.work, "sweep-%s.csv" % case["name"] if i == 0
                               else "sweep-%s-powersgd-%s.csv" % (case["name"], inner))
            algos = dense + schemes if i == 0 else ["powersgd"]
            if i > 0 and "powersgd" not in schemes:
                continue
            cmd = [sparsim, "sweep", "--algo", ",".join(algos), "--ranks", case["ranks"], "--platform", plat,
                   "--device", "none" if a.no_devices else case["device"], "--workload", case["model"],
                   "--payload", "model", "--iters", "2", "--jobs", a.jobs, "--powersgd-allreduce", inner, "--out", out]
            if case["density"] is not None:
                cmd += ["--density", repr(case["density"])]
            if case["testbed"] == "oktopk":  # as bench/papers.py runs Ok-Topk's testbed
                cmd += ["--oktopk-preset", case["model"], "--warmup", "0", "--gaussian-variant", "oktopk"]
            if a.train:
                cmd += ["--train-model", case["model"]]
                if case["batch"]:
                    cmd += ["--batch", str(case["batch"])]
            if os.path.exists(out):
                cmd.append("--resume")
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit("compressed: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
            df = plot_scaling.oktopk_steady(pd.read_csv(out))
            rows += [dict(row, inner=inner) for row in df.to_dict("records") if i == 0 or row["algo"] == "powersgd"]
        for P in case["ranks"].split(","):
            at = {}
            for row in rows:
                if str(row["ranks"]) != P:
                    continue
                name = "dense" if row["algo"] in dense else row["algo"]
                t = float(row["time_per_iter_mean_s"])
                if name not in at or t < at[name][0]:  # the faster of NCCL's two; PowerSGD's fastest inner
                    at[name] = (t, float(row["volume_bytes"]) / 1e6, row["inner"] if name == "powersgd" else row["algo"],
                                0.0 if math.isnan(float(row["samples_per_s"])) else float(row["samples_per_s"]))
            if "dense" not in at:
                continue
            td = at["dense"][0]
            label = "%s | %s | %g | %s" % (plat, case["model"], case["density"], P) if papers else "%s | %s" % (plat, P)
            table.append((plat if not papers else "%s %s" % (plat, case["model"]), P, at))
            if not wide:
                sd = at["dense"][3]
                tr = (lambda x: " %.4g | %.2f |" % (at[x][3], at[x][3] / sd if sd > 0 else 0)) if a.train else (lambda x: "")
                lines.append("| %s | dense (%s) | %.4g | 1.00 | %.1f |%s" % (label, at["dense"][2], td, at["dense"][1],
                                                                           tr("dense")))
                for s in schemes:
                    if s in at:
                        lines.append("| %s | %s%s | %.4g | %.2f | %.1f |%s" % (
                            label, s, " (%s)" % at[s][2] if s == "powersgd" else "", at[s][0], td / at[s][0],
                            at[s][1], tr(s)))
                continue
            cells = ["%.4g, %.2f%s" % (at[s][0], td / at[s][0], " (%s)" % at[s][2] if s == "powersgd" else "")
                     if s in at else "-" for s in schemes]
            vols = " / ".join("%.1f" % at[s][1] if s in at else "-" for s in ["dense"] + schemes)
            lines.append("| %s | %.4g (%s) | %s | %s |" % (label, td, at["dense"][2], " | ".join(cells), vols))
    tables.emit(lines, a.markdown)
    if a.figure:
        draw(a.figure, table, schemes,
             "the papers' settings, one allreduce per iteration (model payloads; accuracy not simulated)" if papers
             else "BERT, one allreduce per iteration (model payloads; accuracy not simulated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
