#!/usr/bin/python3
"""How much the workers' gradient sizes differ within an iteration, on real
training and in the generator (the workload issue, items 1 and 2).

For each model family of traces/record_gradients.py (cnn, lstm, transformer)
and its per-worker batch sizes (a small one, the papers' own and a large
one; --batches chooses), one training run of P = 8
workers recorded in two windows of 16 consecutive iterations, early and late
in training.  For each window: the standard deviation over the ranks of
ln RMS of a rank's gradient, and the largest rank's RMS over the smallest
(median over the window's iterations), from `sparsim workload-stats`; for
the trace: the persistence of a rank's deviation from one iteration to the
next, and what `sparsim profile` fits (rank_sd, rank_corr).  Beside them the
generator with the family's built-in profile (vgg16, lstm, bert) at the
trace's n and batch (`--batch`): the built-in profiles take rank_sd from the
fits of these traces (sim/workload/profile.c), so its column shows them
back through the generator.  --json FILE writes the rows.

usage: bench/rank_scale.py [--build build] [--work DIR] [--iters 300] [--markdown FILE] [--json FILE]
                           [--batches cnn:4,16,32,64/lstm:2,8,20,32/transformer:2,8,32]
Traces already recorded in --work are not recorded again.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tables  # noqa: E402  (the shared helpers)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# the family's built-in profile for the generator's column, and the batches per worker recorded by
# default: 4 and 64 images, 2 and 32 sequences (small and large), and the papers' own (algorithms.md):
# Ok-Topk's VGG-16 16, gTop-k's VGG-16 and ResNet-20 32, ResNet-50 64; Ok-Topk's LSTM 2, gTop-k's
# AN4 LSTM 8 and PTB LSTM 20; BERT 8
FAMILIES = {"cnn": "vgg16", "lstm": "lstm", "transformer": "bert"}
BATCHES = "cnn:4,16,32,64/lstm:2,8,20,32/transformer:2,8,32"


def parse_batches(text):
    out = {}
    for part in text.split("/"):
        fam, _, bs = part.partition(":")
        if fam not in FAMILIES or not bs:
            raise ValueError("bad --batches part %r (want FAMILY:B1,B2,... with FAMILY one of %s)"
                             % (part, ", ".join(FAMILIES)))
        out[fam] = [int(b) for b in bs.split(",")]
        if any(b < 1 for b in out[fam]):
            raise ValueError("batches must be positive: %r" % part)
    return out



def sh(cmd):
    return tables.sh(cmd, "rank_scale")


def record(work, family, batch, iters, windows):
    out = os.path.join(work, "%s-b%d" % (family, batch))
    if not os.path.exists(os.path.join(out, "grads.npy")):
        sh([sys.executable, os.path.join(ROOT, "traces", "record_gradients.py"), "--model", family, "--out", out,
            "--workers", "8", "--iters", str(iters), "--batch", str(batch), "--threads", "1",
            "--record", ",".join("%d-%d" % w for w in windows)])
    return out


def stats(sparsim, args, path):
    if not os.path.exists(path):
        sh([sparsim, "workload-stats"] + args + ["--json", path + ".part"])
        os.replace(path + ".part", path)
    with open(path) as f:
        return json.load(f)


def window_values(st, lo, hi):
    its = [x for x in st["per_iteration"] if lo <= x["iter_id"] <= hi]
    sd = [x["rank_log_sd"] for x in its if x["rank_log_sd"] is not None]
    mm = [x["rank_max_over_min"] for x in its if x["rank_max_over_min"] is not None]
    return (statistics.mean(sd) if sd else float("nan"), statistics.median(mm) if mm else float("nan"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=os.path.join(ROOT, "runs", "rank-scale"))
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--markdown")
    ap.add_argument("--json", help="write the rows here as well")
    ap.add_argument("--batches", default=BATCHES, help="per family, the batches per worker (default %(default)s)")
    a = ap.parse_args()
    try:
        batches = parse_batches(a.batches)
    except ValueError as e:
        print("rank_scale: %s" % e, file=sys.stderr)
        return 2
    if a.iters < 64:
        print("rank_scale: --iters must be at least 64 (two windows of 16, apart)", file=sys.stderr)
        return 2
    sparsim = os.path.join(a.build, "sparsim")
    os.makedirs(a.work, exist_ok=True)
    windows = [(20, 35), (a.iters - 16, a.iters - 1)]
    rows = []
    for family, bs in batches.items():
        model = FAMILIES[family]
        for batch in bs:
            tr = record(a.work, family, batch, a.iters, windows)
            st = stats(sparsim, ["--grad-file", tr], os.path.join(tr, "stats.json"))
            prof = os.path.join(tr, "profile.json")
            if not os.path.exists(prof):
                sh([sparsim, "profile", "--grad-file", tr, "--out", prof])
            with open(prof) as f:
                fit = json.load(f)
            gen = stats(sparsim, ["--workload", model, "--n", str(st["n"]), "--ranks", "8", "--iters", "16",
                                  "--batch", str(batch)],
                        os.path.join(tr, "generator-stats.json"))
            early, late = (window_values(st, lo, hi) for lo, hi in windows)
            rows.append(dict(family=family, batch=batch, n=st["n"], early=early, late=late, corr=st["rank_log_corr"],
                             fit_sd=fit["rank_sd"], fit_corr=fit["rank_corr"], gen_sd=gen["rank_log_sd"],
                             gen_mm=gen["rank_max_over_min"], model=model))
    head = ("| family | batch per worker | n | sd of ln RMS over ranks, early / late | largest / smallest RMS, "
            "early / late | persistence t -> t+1 | profile fits rank_sd, rank_corr | generator (%s profile): sd, "
            "largest / smallest |" % "built-in")
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append("| %s | %d | %d | %.3f / %.3f | %.2f / %.2f | %.2f | %.3f, %.2f | %.3f, %.2f (%s) |"
                     % (r["family"], r["batch"], r["n"], r["early"][0], r["late"][0], r["early"][1], r["late"][1],
                        r["corr"], r["fit_sd"], r["fit_corr"], r["gen_sd"], r["gen_mm"], r["model"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
