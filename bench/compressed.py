#!/usr/bin/python3
"""The compressed schemes beside the dense baseline and the top-k schemes
(the compressed-schemes issue, item 7, for the schemes there are so far).

BERT's gradient (n = 133,547,324) at density 0.01, model payloads, 2
iterations (their mean: for Ok-Topk an exact recompute and a reuse, its
steady state over tau' as the crossover map takes it), on the papers' platforms (1gbe, daint) and a
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

usage: bench/compressed.py [--build build] [--work DIR] [--ranks 64,256] [--no-devices]
       [--schemes LIST|all] [--train] [--jobs 2] [--markdown FILE] [--figure FILE.png]
"""
import argparse
import csv
import os
import pathlib
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# platform, its dense baseline(s), the device that prices local kernels, and
# the dense allreduces PowerSGD's factors try (the fastest kept): on the flat
# platforms MPI's ring and Rabenseifner's, which an MPI library would choose
# for PowerSGD's small vectors; on DGX nodes NCCL's two
PLATFORMS = [("1gbe", ["ring"], "p102", ["ring", "rabenseifner"]),
             ("daint", ["ring"], "p100", ["ring", "rabenseifner"]),
             ("dgx-h100", ["nccl-ring", "nccl-tree"], "h100", ["nccl-ring", "nccl-tree"])]
SCHEMES = ["oktopk", "gtopk", "onebit", "qgz", "powersgd"]
ALL = ["topka", "gtopk", "gaussiank", "topkdsa", "oktopk", "zen", "spardl", "onebit", "qgz", "powersgd"]


def draw(path, table, schemes):
    """speedup over the dense baseline per scheme: a panel per platform, a group per P"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plats = list(dict.fromkeys(t[0] for t in table))
    fig, axes = plt.subplots(1, len(plats), figsize=(4.6 * len(plats), 3.8), sharey=True, squeeze=False)
    for ax, plat in zip(axes[0], plats):
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
        ax.set_title("%s (dense: %s)" % (plat, dense), fontsize=9)
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0][0].set_ylabel("speedup over the dense allreduce")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("BERT, one allreduce per iteration (model payloads; accuracy not simulated)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "compressed"))
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--no-devices", action="store_true", help="device none on every platform")
    ap.add_argument("--schemes", default=",".join(SCHEMES), help="comma-separated, or all")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--train", action="store_true", help="training iterations of BERT: samples per second too")
    ap.add_argument("--markdown")
    ap.add_argument("--figure")
    a = ap.parse_args()
    schemes = ALL if a.schemes == "all" else a.schemes.split(",")
    wide = len(schemes) <= 5
    table = []
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    if wide:
        lines = ["| platform | P | dense baseline: s | " + " | ".join("%s: s, x dense" % s for s in schemes)
                 + " | volume per rank, MB: dense / " + " / ".join(schemes) + " |", "|" + "---|" * (4 + len(schemes))]
    else:
        lines = ["| platform | P | scheme | s per iteration | x dense | volume per rank, MB |"
                 + (" samples/s | x dense |" if a.train else ""), "|---|---|---|---|---|---|" + ("---|---|" if a.train else "")]
    for plat, dense, device, inners in PLATFORMS:
        rows = []
        # PowerSGD's allreduces on each of its dense algorithms (the first with the others)
        for i, inner in enumerate(inners):
            out = os.path.join(a.work, "sweep-%s.csv" % plat if i == 0 else "sweep-%s-powersgd-%s.csv" % (plat, inner))
            algos = dense + schemes if i == 0 else ["powersgd"]
            if i > 0 and "powersgd" not in schemes:
                continue
            cmd = [sparsim, "sweep", "--algo", ",".join(algos), "--ranks", a.ranks, "--platform", plat,
                   "--device", "none" if a.no_devices else device, "--workload", "bert", "--payload", "model",
                   "--iters", "2", "--jobs", a.jobs, "--powersgd-allreduce", inner, "--out", out]
            if a.train:
                cmd += ["--train-model", "bert"]
            if os.path.exists(out):
                cmd.append("--resume")
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit("compressed: %s failed: %s" % (" ".join(cmd), r.stderr.strip()[-400:]))
            with open(out) as f:
                rows += [dict(row, inner=inner) for row in csv.DictReader(f) if i == 0 or row["algo"] == "powersgd"]
        for P in a.ranks.split(","):
            at = {}
            for row in rows:
                if row["ranks"] != P:
                    continue
                name = "dense" if row["algo"] in dense else row["algo"]
                t = float(row["time_per_iter_mean_s"])
                if name not in at or t < at[name][0]:  # the faster of NCCL's two; PowerSGD's fastest inner
                    at[name] = (t, float(row["volume_bytes"]) / 1e6, row["inner"] if name == "powersgd" else row["algo"],
                                float(row["samples_per_s"] or 0))
            if "dense" not in at:
                continue
            td = at["dense"][0]
            table.append((plat, P, at))
            if not wide:
                sd = at["dense"][3]
                tr = (lambda x: " %.4g | %.2f |" % (at[x][3], at[x][3] / sd if sd > 0 else 0)) if a.train else (lambda x: "")
                lines.append("| %s | %s | dense (%s) | %.4g | 1.00 | %.1f |%s" % (plat, P, at["dense"][2], td, at["dense"][1],
                                                                                tr("dense")))
                for s in schemes:
                    if s in at:
                        lines.append("| %s | %s | %s%s | %.4g | %.2f | %.1f |%s" % (
                            plat, P, s, " (%s)" % at[s][2] if s == "powersgd" else "", at[s][0], td / at[s][0],
                            at[s][1], tr(s)))
                continue
            cells = ["%.4g, %.2f%s" % (at[s][0], td / at[s][0], " (%s)" % at[s][2] if s == "powersgd" else "")
                     if s in at else "-" for s in schemes]
            vols = " / ".join("%.1f" % at[s][1] if s in at else "-" for s in ["dense"] + schemes)
            lines.append("| %s | %s | %.4g (%s) | %s | %s |" % (plat, P, td, at["dense"][2], " | ".join(cells), vols))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.markdown:
        pathlib.Path(a.markdown).write_text(text)
    if a.figure:
        draw(a.figure, table, schemes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
