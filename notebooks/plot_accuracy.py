#!/usr/bin/python3
"""Accuracy against time from closed-loop training (traces/train_live.py --out DIR).

One figure, every algorithm of the run together, four panels:
  loss against simulated time       loss against iterations
  metric against simulated time     metric against iterations
The loss is the workers' mean training loss of each iteration, smoothed by a
moving average over 10 iterations (a chosen window: one iteration's batches
are noisy); the metric is the test metric of summary.json (test accuracy, or
bits per character for the LSTM), measured every E iterations, with the
target as a dashed line.  The simulated time is the training's clock on the
run's first platform: compute plus each iteration's simulated allreduce.

Used by train_live.py --plot and runnable on its own:
  /usr/bin/python3 notebooks/plot_accuracy.py DIR [DIR ...] [--out FILE.png]
(several folders of one model, P and target, as bench/time_to_accuracy.py writes
them, in one figure, each curve labelled with its folder's name)
"""
import argparse
import csv
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

SMOOTH = 10   # iterations in the loss's moving average (chosen)


def smooth(values, window=SMOOTH):
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return v
    w = min(window, len(v))
    c = np.cumsum(np.insert(v, 0, 0.0))
    out = np.empty_like(v)
    for i in range(len(v)):   # the mean of the last w values, fewer at the start
        lo = max(0, i + 1 - w)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out


def runs_of(folders):
    """(label, summary, rows of the first platform) of every algorithm of every folder;
    with several folders a label carries its folder's name"""
    for folder in folders:
        summary = json.load(open(os.path.join(folder, "summary.json")))
        platform = summary["platforms"][0]   # the clock of the first platform
        rows = [r for r in csv.DictReader(open(os.path.join(folder, "curves.csv"))) if r["platform"] == platform]
        for algo, a in summary["algorithms"].items():
            label = algo if len(folders) == 1 else f"{algo} ({os.path.basename(os.path.normpath(folder))})"
            yield label, summary, [r for r in rows if r["algo"] == algo]


def plot_accuracy(folders, png):
    folders = [folders] if isinstance(folders, str) else list(folders)
    summary = json.load(open(os.path.join(folders[0], "summary.json")))
    platform = summary["platforms"][0]
    metric = summary["metric"]["name"]
    target = summary["target"]["value"]
    fig, ax = plt.subplots(2, 2, figsize=(12, 8), sharey="row")
    for algo, _, mine in runs_of(folders):
        it = np.array([int(r["iter"]) + 1 for r in mine])
        t = np.array([float(r["time_s"]) for r in mine])
        loss = smooth([float(r["loss"]) for r in mine])
        evals = [(0, 0.0, summary["start"][metric])] + [
            (int(r["iter"]) + 1, float(r["time_s"]), float(r[metric])) for r in mine if r.get(metric, "") != ""]
        ei, et, ev = (np.array(x) for x in zip(*evals))
        line, = ax[0][0].plot(t, loss, label=algo, lw=1.2)
        ax[0][1].plot(it, loss, color=line.get_color(), lw=1.2)
        ax[1][0].plot(et, ev, color=line.get_color(), marker=".", lw=1.2)
        ax[1][1].plot(ei, ev, color=line.get_color(), marker=".", lw=1.2)
    for a in ax[1]:
        a.axhline(target, color="k", ls="--", lw=0.8, label="target")
    ax[0][0].set_ylabel(f"training loss ({SMOOTH}-iteration mean)")
    ax[1][0].set_ylabel(metric.replace("_", " "))
    for a in ax[:, 0]:
        a.set_xlabel("simulated time (s): compute + allreduce")
    for a in ax[:, 1]:
        a.set_xlabel("iterations")
    for a in ax.flat:
        a.grid(alpha=0.3)
    ax[0][0].legend(fontsize=8, ncol=2)
    ax[1][1].legend(fontsize=8)
    density = f"density {summary['density']}, " if len(folders) == 1 else ""
    fig.suptitle(f"{summary['model']} ({summary['size']}, n = {summary['n']:,}), P = {summary['ranks']}, "
                 f"{density}{platform} + {summary['device']}")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folders", nargs="+", help="train_live.py's --out folder(s), of one model, P and target")
    p.add_argument("--out", help="the PNG (default FOLDER/accuracy.png of the first)")
    a = p.parse_args()
    print(plot_accuracy(a.folders, a.out or os.path.join(a.folders[0], "accuracy.png")))


if __name__ == "__main__":
    main()
