#!/usr/bin/python3
"""Scaling plots from a sparsim sweep CSV (sparsim sweep --out FILE).

For every (platform, n, density) in the sweep, four figures:
  volume-*.png     bytes per rank and iteration (as the bounds count it) against P,
                   log-log, with each algorithm's closed-form bound dashed
  time-*.png       simulated time per iteration against P, per algorithm
  phases-*.png     phase shares of each algorithm's iteration at the largest P,
                   with its time per iteration above the bar
  crossover-*.png  each sparse algorithm's time over the fastest dense one's
                   against P; below 1 it wins, the crossing is the crossover
With --map the CSV is a crossover map (bench/crossover_map.py's map.csv):
  map-*.png        one heat map per platform, models down and P across: the
                   fastest scheme and the best sparse scheme's speedup over
                   the fastest dense one; map.png all of them in one figure
and, for a sweep over a disturbance (sparsim sweep --disturb NAME=LEVELS), per
(platform, n, density, P):
  disturb-*.png    each algorithm's slowdown (time per iteration over the same
                   run undisturbed, same seed) against the disturbance's level
The scaling figures of such a sweep use its lowest level.

--oktopk-steady: Ok-Topk recomputes its thresholds exactly (and gathers every
reduced entry) in its first iteration and every tau' after (32 for the vgg16
and lstm presets, 128 for bert; Li & Hoefler, PPoPP 2022, Sec. 5), and reuses
them in between.  A sweep of 2 iterations therefore averages one recompute
and one reuse; with this flag Ok-Topk's time per iteration is the steady
state over tau' iterations, (t_recompute + (tau' - 1) t_reuse) / tau', with
t_recompute the slower of the two iterations (time_per_iter_max_s) and
t_reuse = 2 mean - max.  Only rows of 2 iterations are changed.

Used by notebooks/scaling.ipynb and runnable on its own:
  /usr/bin/python3 notebooks/plot_scaling.py SWEEP.csv [MORE.csv ...] --out DIR
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

DENSE = ("ring", "recdoubling", "rabenseifner", "nccl-ring", "nccl-tree")
COLORS = {
    "ring": "#4c72b0", "recdoubling": "#8172b2", "rabenseifner": "#64b5cd", "topka": "#dd8452",
    "gtopk": "#55a868", "gaussiank": "#c44e52", "topkdsa": "#937860", "oktopk": "#da8bc3",
    "nccl-ring": "#1f3b73", "nccl-tree": "#3d6fb0",
}


def load(path):
    """The finished rows of a sweep CSV (or of several, given as a list: sweeps of one study kept in
    separate files, such as one per rank count), with phase times split into a dict."""
    paths = [path] if isinstance(path, str) else list(path)
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    df = df[df["status"] == "ok"].copy()
    if df.empty:
        raise ValueError("%s has no finished run" % ", ".join(paths))

    def phases(text):
        out = {}
        if isinstance(text, str):
            for item in text.split(";"):
                name, _, val = item.rpartition(":")
                if name:
                    out[name] = float(val)
        return out

    df["phases"] = df["phase_times"].map(phases)
    return df


# set by plot_all: said in the titles of the figures Ok-Topk's steady state changes
STEADY_NOTE = ""
# Ok-Topk's exact-recompute interval tau' per preset (algorithms/oktopk.c)
TAU_PRIME = {"vgg16": 32, "lstm": 32, "bert": 128}


def steady_time(t_recompute, t_reuse, tau_prime):
    """Ok-Topk's time per iteration over tau' iterations: one exact recompute, tau' - 1 reuses"""
    return (t_recompute + (tau_prime - 1) * t_reuse) / tau_prime


def oktopk_steady(df):
    """Ok-Topk's 2-iteration rows as their steady state over tau' (see above); its node-aware forms
    (rail:oktopk, leader:oktopk) recompute and reuse as it does."""
    df = df.copy()
    for i, r in df[df.algo.astype(str).str.split(":").str[-1] == "oktopk"].iterrows():
        sets = dict(item.split("=", 1) for item in str(r.get("settings", "")).split(";") if "=" in item)
        if int(r.iters) != 2:
            continue
        taup = int(sets["tau-prime"]) if "tau-prime" in sets else TAU_PRIME[sets.get("oktopk-preset", "bert")]
        t_re = float(r.time_per_iter_max_s)
        t_reuse = 2 * float(r.time_per_iter_mean_s) - t_re
        t_steady = steady_time(t_re, t_reuse, taup)
        # a whole training iteration (--train-model) adds the sparse allreduce to the compute, without
        # overlap (docs/training.md): it shortens by what the allreduce does, and the throughput grows
        it, sps = float(r.get("iteration_s", float("nan"))), float(r.get("samples_per_s", float("nan")))
        if it == it and it > 0 and sps == sps:  # not NaN: the row has a training iteration
            shorter = it - (float(r.time_per_iter_mean_s) - t_steady)
            df.at[i, "samples_per_s"] = sps * it / shorter
            df.at[i, "iteration_s"] = shorter
        df.at[i, "time_per_iter_mean_s"] = t_steady
    return df


def disturbed(df):
    """The sweep's disturbance axis (an option of sparsim run), or None."""
    if "disturbance" not in df.columns:
        return None
    names = df["disturbance"].dropna().astype(str)
    names = names[names != ""].unique()
    return names[0] if len(names) else None


def lowest_level(df):
    """The rows of a disturbance sweep at its lowest level (all rows otherwise)."""
    if disturbed(df) is None:
        return df
    levels = pd.to_numeric(df["level"], errors="coerce")
    if levels.isna().all():
        return df[df["level"] == sorted(df["level"].astype(str))[0]]
    return df[levels == levels.min()]


def slowdowns(sub):
    """Each row's slowdown: the run's own against its undisturbed baseline,
    or, where it has none (a level that disturbs nothing, or a run without
    a baseline), its time over the same configuration's at the lowest level."""
    sub = sub.copy()
    sub["level_x"] = pd.to_numeric(sub["level"], errors="coerce")
    out = []
    for _, r in sub.iterrows():
        if pd.notna(r.get("slowdown")) and r["slowdown"] > 0:
            out.append(float(r["slowdown"]))
            continue
        same = sub[sub.algo == r.algo].sort_values("level_x")
        base = same.time_per_iter_mean_s.iloc[0]
        out.append(float(r.time_per_iter_mean_s / base) if base > 0 else float("nan"))
    sub["slowdown_x"] = out
    return sub


def plot_disturbance(df, out):
    """Slowdown against the disturbance's level, one line per algorithm, for
    every (platform, n, density, P) of a disturbance sweep."""
    name = disturbed(df)
    if name is None:
        return []
    paths = []
    keys = df[["platform", "n", "density", "ranks"]].drop_duplicates().sort_values(["platform", "n", "density", "ranks"])
    for _, k in keys.iterrows():
        sub = df[(df.platform == k.platform) & (df.n == k.n) & (df.density == k.density) & (df.ranks == k.ranks)]
        sub = slowdowns(sub)
        numeric = sub.level_x.notna().all()
        fig, ax = plt.subplots(figsize=(8.5, 4.5))
        for algo, g in sub.groupby("algo"):
            g = g.sort_values("level_x" if numeric else "level")
            x = g.level_x if numeric else g.level.astype(str)
            ax.plot(x, g.slowdown_x, "o-", color=COLORS.get(algo), label=algo)
        ax.axhline(1.0, color="black", linewidth=1)
        if numeric and (sub.level_x > 0).all() and sub.level_x.max() / sub.level_x.min() >= 10:
            ax.set_xscale("log")
        ax.set_xlabel("--%s" % name)
        ax.set_ylabel("time per iteration / undisturbed")
        key = (k.platform, int(k.n), float(k.density))
        ax.set_title(title(key, "slowdown under %s, P = %d" % (name, k.ranks)), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        path = os.path.join(out, "disturb-%s-P%d-%s.png" % (tag(key), k.ranks, name))
        paths.append(_save(fig, ax, path, 8))
    return paths


def groups(df):
    """(platform, n, density) -> rows, in a stable order."""
    keys = df[["platform", "n", "density"]].drop_duplicates().sort_values(["platform", "n", "density"])
    for _, k in keys.iterrows():
        sub = df[(df.platform == k.platform) & (df.n == k.n) & (df.density == k.density)]
        yield (k.platform, int(k.n), float(k.density)), sub


def tag(key):
    platform, n, density = key
    return "%s-n%d-d%g" % (os.path.basename(str(platform)).replace(".xml", ""), n, density)


def title(key, what):
    platform, n, density = key
    return "%s: %s, n = %d, density %g" % (what, os.path.basename(str(platform)), n, density)


def _save(fig, ax, path, legend_size):
    """Legend beside the axes (no line hides behind it), the PNG, the figure closed."""
    ax.legend(fontsize=legend_size, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _against_p(key, sub, out, column, ylabel, what, name, bound_column=None, extra=None):
    """One line per algorithm of `column` against P on log-log axes,
    with `bound_column` dashed in the same colour; `extra(ax)` adds more."""
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    if extra:
        extra(ax)
    for algo, g in sub.groupby("algo"):
        g = g.sort_values("ranks")
        c = COLORS.get(algo)
        ax.plot(g.ranks, g[column], "o-", color=c, label=algo)
        if bound_column and g[bound_column].notna().all():
            ax.plot(g.ranks, g[bound_column], "--", color=c, alpha=0.6, linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks P")
    ax.set_ylabel(ylabel)
    ax.set_title(title(key, what), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    return _save(fig, ax, os.path.join(out, "%s-%s.png" % (name, tag(key))), 8)


def plot_volume(key, sub, out):
    def lower(ax):
        # the lower bound of any sparse allreduce, 2k(P-1)/P words (Li & Hoefler,
        # PPoPP 2022, Table 1), the same in every sparse row of one P
        sparse = sub[~sub.algo.isin(DENSE)].groupby("ranks").lower_bytes.first().sort_index()
        if not sparse.empty:
            ax.plot(sparse.index, sparse.values, ":", color="black", linewidth=1.5,
                    label="lower bound 2k(P-1)/P")

    return _against_p(key, sub, out, "volume_bytes", "bytes per rank and iteration",
                      "volume (dashed: closed-form bounds)", "volume", "bound_bytes", lower)


def plot_time(key, sub, out):
    return _against_p(key, sub, out, "time_per_iter_mean_s", "simulated time per iteration (s)",
                      "time per iteration" + STEADY_NOTE, "time")


def _fmt_seconds(t):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return "%.3g %s" % (t / scale, unit)
    return "%.3g ns" % (t * 1e9)


def plot_phases(key, sub, out):
    """Each algorithm's iteration at the largest P as shares of its phases
    (times differ by orders of magnitude between algorithms, so every bar is
    scaled to 1 and its total time is written above it)."""
    P = sub.ranks.max()
    at = sub[sub.ranks == P].sort_values("algo")
    names = []
    for ph in at.phases:
        for name in ph:
            if name not in names:
                names.append(name)
    totals = [sum(ph.values()) or 1.0 for ph in at.phases]
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    bottom = [0.0] * len(at)
    cmap = plt.get_cmap("tab20")
    for i, name in enumerate(names):
        vals = [ph.get(name, 0.0) / t for ph, t in zip(at.phases, totals)]
        ax.bar(list(at.algo), vals, bottom=bottom, label=name, color=cmap(i % 20))
        bottom = [b + v for b, v in zip(bottom, vals)]
    for x, t in enumerate(at.time_per_iter_mean_s):
        ax.text(x, 1.02, _fmt_seconds(t), ha="center", fontsize=7)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("share of the iteration (largest rank's time per phase)")
    ax.set_title(title(key, "phases at P = %d (time per iteration above each bar)" % P), fontsize=10)
    ax.tick_params(axis="x", rotation=30)
    return _save(fig, ax, os.path.join(out, "phases-%s.png" % tag(key)), 7)


def plot_crossover(key, sub, out):
    dense = sub[sub.algo.isin(DENSE)]
    if dense.empty:
        return None
    # only at the P where every dense algorithm of the sweep ran: elsewhere the
    # "fastest dense" would be whichever happened to finish
    have = dense.groupby("ranks").algo.nunique()
    best = dense[dense.ranks.isin(have[have == dense.algo.nunique()].index)].groupby("ranks").time_per_iter_mean_s.min()
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    for algo, g in sub[~sub.algo.isin(DENSE)].groupby("algo"):
        g = g.sort_values("ranks")
        g = g[g.ranks.isin(best.index)]
        ratio = g.time_per_iter_mean_s.values / best.loc[g.ranks].values
        ax.plot(g.ranks, ratio, "o-", color=COLORS.get(algo), label=algo)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("ranks P")
    ax.set_ylabel("time / fastest dense allreduce")
    ax.set_title(title(key, "sparse over dense (below 1: sparse wins)" + STEADY_NOTE), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    return _save(fig, ax, os.path.join(out, "crossover-%s.png" % tag(key)), 8)


# a crossover map's cells: the fastest allreduce's short name, coloured blue
# where a dense allreduce wins, red where a sparse one does
MAP_SHORT = {"nccl-ring": "NCCL ring", "nccl-tree": "NCCL tree", "rabenseifner": "Rabenseifner",
             "recdoubling": "rec. doubling"}


def _map_panel(ax, plat, g, fontsize):
    """one platform's heat map on ax: models down, P across"""
    import numpy as np
    models = list(dict.fromkeys(g.model))
    Ps = sorted(g.ranks.unique())
    z = np.full((len(models), len(Ps)), np.nan)
    for i, mo in enumerate(models):
        for j, p in enumerate(Ps):
            r = g[(g.model == mo) & (g.ranks == p)]
            if r.empty:  # a cell the map's sweeps did not run
                ax.text(j, i, "not run", ha="center", va="center", fontsize=fontsize, color="0.5")
                continue
            if not r.iloc[0].sparse_speedup:
                continue
            r = r.iloc[0]
            text = "%s\nallreduce x%.2f" % (MAP_SHORT.get(r.winner, r.winner), float(r.sparse_speedup))
            train = "train_ratio" in r and r.train_ratio == r.train_ratio and r.train_ratio
            if train:
                text += "\ntraining x%.2f" % float(r.train_ratio)
            # the colour is what training gains where the map has it, else the allreduce's speedup
            z[i, j] = np.log2(float(r.train_ratio) if train else float(r.sparse_speedup))
            ax.text(j, i, text, ha="center", va="center", fontsize=fontsize)
    # one colour scale for every panel: log2 of 1/2 .. 2, clipped
    im = ax.imshow(np.clip(z, -1, 1), cmap="coolwarm", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(len(Ps)), [str(p) for p in Ps])
    ax.set_yticks(range(len(models)), models)
    ax.set_xlabel("GPUs P")
    ax.set_title(plat, fontsize=10)
    return im


def plot_map(m, out):
    """One heat map per platform of a crossover map (bench/crossover_map.py's map.csv as a DataFrame),
    map-PLATFORM.png, and all of them in one figure, map.png: models down, P across; the text is
    the fastest allreduce, the fastest sparse or node-aware scheme's allreduce speedup over the
    fastest dense one and, where the map has it, the best sparse scheme's training throughput over
    the best dense one's (train_ratio); the colour is log2 of train_ratio (red: sparse pays), or of
    the allreduce speedup where the map has no training figures.  Returns the paths."""
    paths = []
    os.makedirs(out, exist_ok=True)
    caption = ("the fastest allreduce; x: the best sparse scheme over the best dense one, in allreduce time "
               "and in training throughput (the dense allreduce overlapped with the backward pass)\n"
               "colour: training throughput of sparse over dense, red: sparse pays, blue: it does not "
               "(log2 scale, clipped at 2x)")
    groups_ = list(m.groupby("platform", sort=False))
    for plat, g in groups_:
        n_p, n_m = g.ranks.nunique(), g.model.nunique()
        fig, ax = plt.subplots(figsize=(2.2 + 1.3 * n_p, 1.5 + 0.7 * n_m))
        im = _map_panel(ax, plat, g, 6.5)
        fig.colorbar(im, ax=ax, fraction=0.04).set_label("log2 training speedup of sparse", fontsize=7)
        fig.suptitle(caption, fontsize=7)
        fig.tight_layout()
        path = os.path.join(out, "map-%s.png" % plat)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if len(groups_) > 1:
        cols = 2
        rows = (len(groups_) + cols - 1) // cols
        n_p = max(g.ranks.nunique() for _, g in groups_)
        n_m = max(g.model.nunique() for _, g in groups_)
        fig, axes = plt.subplots(rows, cols, figsize=(cols * (1.6 + 1.15 * n_p), rows * (1.2 + 0.62 * n_m)),
                                 squeeze=False)
        for k, (plat, g) in enumerate(groups_):
            im = _map_panel(axes[k // cols][k % cols], plat, g, 5.2)
        for k in range(len(groups_), rows * cols):
            axes[k // cols][k % cols].axis("off")
        fig.suptitle(caption, fontsize=8)
        fig.tight_layout(rect=(0, 0, 0.93, 0.97))
        fig.colorbar(im, cax=fig.add_axes((0.945, 0.15, 0.012, 0.7))).set_label("log2 training speedup of sparse",
                                                                                 fontsize=8)
        path = os.path.join(out, "map.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    return paths


def plot_all(csv_path, out, steady=False):
    """Writes every figure of the sweep to `out`; returns their paths."""
    os.makedirs(out, exist_ok=True)
    df = load(csv_path)
    global STEADY_NOTE
    STEADY_NOTE = " (Ok-Topk: steady state over tau')" if steady else ""
    if steady:
        df = oktopk_steady(df)
    paths = []
    for key, sub in groups(lowest_level(df)):
        for f in (plot_volume, plot_time, plot_phases, plot_crossover):
            p = f(key, sub, out)
            if p:
                paths.append(p)
    return paths + plot_disturbance(df, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+", help="a sweep CSV (sparsim sweep --out), or several plotted together")
    ap.add_argument("--out", default=".", help="folder for the PNG files (default: here)")
    ap.add_argument("--oktopk-steady", action="store_true",
                    help="Ok-Topk's 2-iteration rows as their steady state over tau' (see above)")
    ap.add_argument("--map", action="store_true",
                    help="the CSV is a crossover map (bench/crossover_map.py's map.csv): one heat map per platform")
    a = ap.parse_args()
    try:
        paths = plot_map(pd.concat([pd.read_csv(c) for c in a.csv]), a.out) if a.map else \
            plot_all(a.csv, a.out, a.oktopk_steady)
    except (OSError, ValueError, KeyError) as e:
        print("plot_scaling: %s" % e, file=sys.stderr)
        return 1
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
