#!/usr/bin/env python3
"""The papers' published numbers against sparsim's predictions (fidelity issue, bench/papers.md).

Two testbeds, each in the settings its paper states (reference notes,
../shared/reference/algorithms.md, sections 2.8, 4.3 and 8):

  gtopk   gTop-k (Shi et al., ICDCS 2019): 1 Gbps Ethernet, P102-100 GPUs,
          density 0.001, the paper's six models with its per-GPU batches
          (the authors' exp_configs): VGG-16 (32) and ResNet-20 (32) on
          CIFAR-10, AlexNet (256) and ResNet-50 (64) on ImageNet, the 2-layer
          LSTM on PTB (20) and the AN4 LSTM (8), at P = 4 and 32; ring,
          Rabenseifner, TopkA, gTop-k; four cost models:
            plain    1gbe crossbar, lv08 (TCP), p102 (kernels only)
            host     the same with p102-host (o, call and copy overheads)
            switch   1gbe-switch (8 Gbps backplane), lv08, p102-host
            fit      the authors' fitted alpha = 0.436 ms, beta = 9 ns/B as a
                     crossbar (cm02, every route alpha + L beta), p102-host
  oktopk  Ok-Topk (Li & Hoefler, PPoPP 2022): Piz Daint, P100 GPUs; the
          platform is daint (Aries' wiring: global links on every router,
          50 per pair of groups, detours within a chassis), or the one
          --oktopk-platform names (daint-simgrid: SimGrid's dragonfly, the
          earlier daint);
          BERT at P = 256 (density 0.01, batch 8), VGG-16 at P = 32 (density
          0.02, batch 16), LSTM at P = 64 (density 0.02, batch 2); every
          scheme the paper compares (dense ring and Rabenseifner, TopkA,
          TopkDSA, gTop-k, Gaussian-k with the Ok-Topk authors' loop, Ok-Topk
          with the model's preset); p100 and p100-host.
  scaling Ok-Topk's testbed at each GPU count the paper runs a model on:
          VGG-16 at P = 16, 32, 64; LSTM at 32, 64, 128; BERT at 32, 64,
          128, 256 (p100-host): Ok-Topk's samples/s, its speedup over the
          fastest dense scheme and over the slowest and fastest other
          scheme, and its scaling efficiency from the smallest P.

Model payloads at the papers' n; iterations 0 and 1 (no dense warm-up); the
Ok-Topk testbed from a settled residual (--settle, 100 iterations of local
error feedback by default): the papers' throughput averages thousands of
sparse iterations, and a threshold reused right after a cold start passes
far more entries than mid-training (bench/README.md section 22); 0 starts cold.
Ok-Topk recomputes its thresholds exactly every tau' iterations (32, 32, 128)
and reuses them in between: its allreduce per iteration is weighted as
(t0 + (tau' - 1) t1) / tau'; the other algorithms' is iteration 1's (their
iterations are alike, Gaussian-k's first adjusts its threshold from a cold
start).  A training iteration is the model's compute on the device (forward +
backward, sim/workload/paper_models.c) plus that allreduce, without overlap
(the papers' codes run one allreduce after backward).

Prints one markdown table per testbed and writes every figure to
OUT/papers.json.

usage: bench/papers.py [--build build] [--out runs/papers] [--only gtopk|oktopk|scaling]
                       [--oktopk-platform daint] [--settle 100] [--reuse]
"""
import argparse
import json
import os
import subprocess
import sys
import time

GTOPK_MODELS = [("vgg16", 32), ("resnet20", 32), ("alexnet", 256), ("resnet50", 64), ("lstm-ptb", 20),
                ("lstm", 8)]
GTOPK_ALGOS = "ring,rabenseifner,topka,gtopk"
OKTOPK_MODELS = [("bert", 256, 0.01, 8, 128), ("vgg16", 32, 0.02, 16, 32), ("lstm", 64, 0.02, 2, 32)]
# the GPU counts the paper runs each model on (reference notes section 2.8, MEM)
OKTOPK_SCALING = [("vgg16", (16, 32, 64)), ("lstm", (32, 64, 128)), ("bert", (32, 64, 128, 256))]
OKTOPK_ALGOS = "ring,rabenseifner,topka,topkdsa,gtopk,gaussiank,oktopk"
DENSE = ("ring", "recdoubling", "rabenseifner")
DONE = set()  # runs made by this call

# the gTop-k authors' fitted dense-allreduce constants (reference notes
# section 5: alpha = 0.436 ms per message, beta = 9 ns per byte): a crossbar
# whose routes are two links of alpha/2 each at 1/beta bytes per second
FIT_XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <!-- the gTop-k authors' fit: alpha = 0.436 ms, beta = 9 ns/B per route of two links -->
  <cluster id="fit" prefix="node-" suffix="" radical="0-{last}" speed="1Gf"
           bw="{bw:.10g}Bps" lat="218us" sharing_policy="SPLITDUPLEX"/>
</platform>
"""


def run(cmd, reuse, out):
    if reuse and os.path.exists(os.path.join(out, "comparison.csv")):
        return 0.0
    t0 = time.time()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return time.time() - t0


def load(out, algos):
    res = {}
    for a in algos.split(","):
        with open(os.path.join(out, a, "summary.json")) as f:
            res[a] = json.load(f)
    return res


def comm_of(s, algo, tau_prime):
    """the allreduce per training iteration, from iterations 0 and 1"""
    its = [it["time_s"] for it in s["iterations"]]
    if algo == "oktopk":
        return (its[0] + (tau_prime - 1) * its[1]) / tau_prime
    return its[-1]


def figures(res, algos, tau_prime, P, batch):
    rows = {}
    for a in algos.split(","):
        s = res[a]
        comm = comm_of(s, a, tau_prime)
        compute = s["training"]["compute_s"]
        it = compute + comm
        rows[a] = {"comm_s": comm, "compute_s": compute, "iteration_s": it, "samples_per_s": P * batch / it}
    dense = min(rows[a]["iteration_s"] for a in rows if a in DENSE)
    for a in rows:
        rows[a]["speedup_vs_dense"] = dense / rows[a]["iteration_s"]
    return rows


def gtopk_testbed(a, B, results):
    fit = os.path.join(a.out, "gtopk-fit.xml")
    with open(fit, "w") as f:
        f.write(FIT_XML.format(last=31, bw=1 / 9e-9))
    variants = [("plain", "1gbe", "lv08", "p102"), ("host", "1gbe", "lv08", "p102-host"),
                ("switch", "1gbe-switch", "lv08", "p102-host"), ("fit", fit, "cm02", "p102-host")]
    print("\n### gTop-k testbed: 1 GbE, P102-100, density 0.001\n")
    print("| model | P | cost model | dense comm (s, fastest) | TopkA comm | gTop-k comm | gTop-k iteration | "
          "gTop-k samples/s | gTop-k / dense | gTop-k / TopkA | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model, batch in GTOPK_MODELS:
        for P in (4, 32):
            for name, plat, net, dev in variants:
                out = os.path.join(a.out, "gtopk", "%s-P%d-%s" % (model, P, name))
                cmd = [B, "run", "--algo", GTOPK_ALGOS, "--ranks", str(P), "--workload", model, "--payload", "model",
                       "--density", "0.001", "--warmup", "0", "--iters-at", "0,1", "--platform", plat, "--network",
                       net, "--device", dev, "--train-model", model, "--batch", str(batch), "--out", out, "--no-csv",
                       "--no-trace", "--quiet"]
                wall = run(cmd, a.reuse, out)
                rows = figures(load(out, GTOPK_ALGOS), GTOPK_ALGOS, 1, P, batch)
                d = min((rows[x]["comm_s"], x) for x in ("ring", "rabenseifner"))
                g, t = rows["gtopk"], rows["topka"]
                results.setdefault("gtopk", {})["%s-P%d-%s" % (model, P, name)] = {
                    "command": " ".join(cmd[1:]).replace(B, "sparsim"), "rows": rows}
                print("| %s | %d | %s | %.4g (%s) | %.4g | %.4g | %.4g | %.0f | %.2f | %.2f | %.1f |" % (
                    model, P, name, d[0], d[1], t["comm_s"], g["comm_s"], g["iteration_s"], g["samples_per_s"],
                    g["speedup_vs_dense"], t["iteration_s"] / g["iteration_s"], wall))
                sys.stdout.flush()


def oktopk_run(a, B, model, P, density, batch, tau_prime, dev):
    """every scheme on one model, P and device; runs already made in this call are kept"""
    out = os.path.join(a.out, "oktopk", "%s-P%d-%s" % (model, P, dev))
    cmd = [B, "run", "--algo", OKTOPK_ALGOS, "--ranks", str(P), "--workload", model, "--payload", "model",
           "--density", str(density), "--warmup", "0", "--oktopk-preset", model, "--gaussian-variant", "oktopk",
           "--iters-at", "0,1", "--platform", a.oktopk_platform, "--device", dev, "--train-model", model,
           "--batch", str(batch), "--settle", str(a.settle), "--out", out, "--no-csv", "--no-trace", "--quiet"]
    wall = run(cmd, a.reuse or out in DONE, out)
    DONE.add(out)
    res = load(out, OKTOPK_ALGOS)
    return " ".join(cmd[1:]).replace(B, "sparsim"), wall, res, figures(res, OKTOPK_ALGOS, tau_prime, P, batch)


def oktopk_testbed(a, B, results):
    print("\n### Ok-Topk testbed: Piz Daint (%s), P100\n" % a.oktopk_platform)
    print("| model | P | device | compute (s) | Ok-Topk comm (s) | Ok-Topk iteration (s) | Ok-Topk over each other "
          "scheme (iteration time ratio) | range | Ok-Topk volume / 6k(P-1)/P, iterations 0, 1 | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model, P, density, batch, tau_prime in OKTOPK_MODELS:
        for dev in ("p100", "p100-host"):
            cmd, wall, res, rows = oktopk_run(a, B, model, P, density, batch, tau_prime, dev)
            ok = rows["oktopk"]
            s = res["oktopk"]  # Eq. 3's bound, 6k(P-1)/P words of 4 bytes
            bound = 6.0 * s["k"] * (P - 1) / P * 4
            vol = [it["volume_bytes"] / bound for it in s["iterations"]]
            ratios = {x: rows[x]["iteration_s"] / ok["iteration_s"] for x in rows if x != "oktopk"}
            results.setdefault("oktopk", {})["%s-P%d-%s" % (model, P, dev)] = {
                "command": cmd, "rows": rows, "oktopk_over": ratios, "oktopk_volume_over_bound": vol}
            print("| %s | %d | %s | %.4g | %.4g | %.4g | %s | %.2f-%.2f | %s | %.1f |" % (
                model, P, dev, ok["compute_s"], ok["comm_s"], ok["iteration_s"],
                ", ".join("%s %.2f" % (x, r) for x, r in sorted(ratios.items())), min(ratios.values()),
                max(ratios.values()), ", ".join("%.2f" % v for v in vol), wall))
            sys.stdout.flush()


def oktopk_scaling(a, B, results):
    """Ok-Topk and every other scheme at each GPU count the paper runs a model on (p100-host)"""
    print("\n### Ok-Topk scaling: Piz Daint (%s), p100-host\n" % a.oktopk_platform)
    print("| model | P | compute (s) | comm (s): fastest dense, TopkA, Ok-Topk | Ok-Topk samples/s | "
          "Ok-Topk / fastest dense | Ok-Topk / slowest other, fastest other | scaling efficiency | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    params = {m[0]: m[2:] for m in OKTOPK_MODELS}
    for model, counts in OKTOPK_SCALING:
        density, batch, tau_prime = params[model]
        base = None
        for P in counts:
            cmd, wall, res, rows = oktopk_run(a, B, model, P, density, batch, tau_prime, "p100-host")
            ok = rows["oktopk"]
            others = {x: rows[x]["iteration_s"] / ok["iteration_s"] for x in rows if x != "oktopk"}
            d = min((rows[x]["comm_s"], x) for x in rows if x in DENSE)
            per_gpu = ok["samples_per_s"] / P
            base = base or per_gpu
            slow, fast = max(others, key=others.get), min(others, key=others.get)
            results.setdefault("oktopk_scaling", {})["%s-P%d" % (model, P)] = {
                "command": cmd, "rows": rows, "oktopk_over": others, "scaling_efficiency": per_gpu / base}
            print("| %s | %d | %.4g | %.4g (%s), %.4g, %.4g | %.0f | %.2f | %.2f (%s), %.2f (%s) | %.2f | %.1f |" % (
                model, P, ok["compute_s"], d[0], d[1], rows["topka"]["comm_s"], ok["comm_s"], ok["samples_per_s"],
                ok["speedup_vs_dense"], others[slow], slow, others[fast], fast, per_gpu / base, wall))
            sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="runs/papers")
    ap.add_argument("--only", choices=["gtopk", "oktopk", "scaling"],
                    help="one part: the gTop-k testbed, the Ok-Topk testbed, or Ok-Topk's scaling")
    ap.add_argument("--oktopk-platform", default="daint",
                    help="the Ok-Topk testbed's platform (daint-simgrid: the earlier daint)")
    ap.add_argument("--settle", type=int, default=100,
                    help="the Ok-Topk testbed's residual: iterations of local error feedback before (0: cold)")
    ap.add_argument("--reuse", action="store_true", help="keep runs already in OUT")
    a = ap.parse_args()
    B = os.path.abspath(os.path.join(a.build, "sparsim"))
    os.makedirs(a.out, exist_ok=True)
    results = {}
    path = os.path.join(a.out, "papers.json")
    if a.only and os.path.exists(path):  # one testbed again: keep the other's figures
        with open(path) as f:
            results = json.load(f)
    if a.only in (None, "gtopk"):
        gtopk_testbed(a, B, results)
    if a.only in (None, "oktopk"):
        oktopk_testbed(a, B, results)
    if a.only in (None, "scaling"):
        oktopk_scaling(a, B, results)
    with open(path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
