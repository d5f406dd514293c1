#!/usr/bin/env python3
"""Per-kind parameters of a fitted profile, for the built-in paper profiles.

A profile fitted to a recorded trace (`sparsim profile --grad-file TRACE`)
gives every tensor (or piece of one) its median log10 scale, the spread of
log10 scales within it and its share of exact zeros.  The papers' models
have other tensors of the same kinds (convolution weights, biases, norms,
embeddings, LSTM gates), so the built-in profiles carry per-kind values:

  log10_scale   size-weighted median over the kind's pieces, relative to
                the model's weight matrices (conv_weight for a CNN,
                lstm_weight_hh for an LSTM, linear_weight otherwise)
  log10_spread  sqrt(weighted variance of the pieces' medians + weighted
                mean of their within-piece variances): the kind's whole
                spread, as one tensor of that kind holds it
  zeros         size-weighted mean

and the profile's global parameters as they are.

usage: traces/kind_table.py PROFILE.json LAYERS.json [--c NAME]
  LAYERS.json is the trace's layer table (names and shapes classify kinds).
  --c prints the rows as sim/workload/profile.c holds them.
"""
import argparse
import json
import math
import re
import sys


def kind_of(name, shape):
    """The kind of a tensor from its name and shape (PyTorch naming)."""
    n = name.lower()
    nd = len(shape)
    leaf = n.rsplit(".", 1)[-1]
    bias = "bias" in leaf
    if "weight_ih" in leaf:
        return "lstm_weight_ih"
    if "weight_hh" in leaf:
        return "lstm_weight_hh"
    if "bias_ih" in leaf or "bias_hh" in leaf:
        return "lstm_bias"
    if re.search(r"(^|[._])bn\d|batchnorm|(^|[._])bn([._]|$)", n):
        return "bn_bias" if bias else "bn_weight"
    if "norm" in n:
        return "layernorm_bias" if bias else "layernorm_weight"
    if nd == 4:
        return "conv_weight"
    if "conv" in n:
        return "conv_bias" if bias else "conv_weight"
    if re.search(r"emb|token|position", n) and nd == 2:
        return "embedding"
    if bias or nd == 1:
        return "linear_bias"
    if nd == 2:
        return "linear_weight"
    return "other"


def weighted_median(vals, weights):
    pairs = sorted(zip(vals, weights))
    total = sum(weights)
    acc = 0.0
    for v, w in pairs:
        acc += w
        if acc >= total / 2:
            return v
    return pairs[-1][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("layers")
    ap.add_argument("--c", default="")
    a = ap.parse_args()
    prof = json.load(open(a.profile))
    table = json.load(open(a.layers))
    shapes = {l["name"]: l.get("shape", [l["size"]]) for l in table["layers"]}
    groups = {}
    for piece in prof["layers"]:
        base = re.sub(r"\[\d+\]$", "", piece["name"])
        if base not in shapes:
            sys.exit("piece %s: no tensor %s in %s" % (piece["name"], base, a.layers))
        k = kind_of(base, shapes[base])
        groups.setdefault(k, []).append(piece)
    ref = next((r for r in ("conv_weight", "lstm_weight_hh", "linear_weight") if r in groups), None)
    if ref is None:
        sys.exit("no weight matrices to scale against")

    def med(ps):
        return weighted_median([p["log10_scale"] for p in ps], [p["size"] for p in ps])

    base = med(groups[ref])
    rows = []
    for k in sorted(groups):
        ps = groups[k]
        w = [p["size"] for p in ps]
        W = float(sum(w))
        m = med(ps)
        mean = sum(p["log10_scale"] * x for p, x in zip(ps, w)) / W
        var_between = sum((p["log10_scale"] - mean) ** 2 * x for p, x in zip(ps, w)) / W
        var_within = sum(p["log10_spread"] ** 2 * x for p, x in zip(ps, w)) / W
        zeros = sum(p["zeros"] * x for p, x in zip(ps, w)) / W
        rows.append((k, m - base, math.sqrt(var_between + var_within), zeros, int(W)))
    glob = {k: prof[k] for k in ("common", "mean", "refresh", "keep", "scale_sd", "scale_corr", "spikes",
                                 "spike_scale")}
    if a.c:
        for k, s, sp, z, W in rows:
            print('    {"%s", "%s", %.3f, %.3f, %.4f}, /* %d entries */' % (a.c, k, s, sp, z, W))
        print("    /* %s globals: %s */" % (a.c, ", ".join("%s %.4g" % kv for kv in glob.items())))
        return
    print(json.dumps({"reference_kind": ref, "kinds": {k: {"log10_scale": s, "log10_spread": sp, "zeros": z,
                                                            "entries": W} for k, s, sp, z, W in rows},
                      "globals": glob}, indent=1))


if __name__ == "__main__":
    main()
