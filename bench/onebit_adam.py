#!/usr/bin/env python3
"""1-bit Adam's published speedups against sparsim's onebit on the paper's kind of cluster (issue 28).

The published numbers (DeepSpeed's 1-bit Adam blog post, 2020-09-09, and Tang et al., ICML 2021,
arXiv 2102.02888, abstract):
  - BERT-Large pre-training, V100 GPUs, 16 sequences of 128 tokens per GPU, FP16;
  - during the compression stage, up to 6.6x the throughput of Adam on 40 Gigabit Ethernet (4.1 Gbps
    effective by iperf, the blog says) and up to 2x on 40 Gbps InfiniBand QDR (32 Gbps by perftest);
  - end to end, with a warm-up stage of uncompressed Adam over 15% of the steps: 3.5x (blog) or 3.3x
    (the paper's abstract, "on up to 256 GPUs").

The setting here, and where each figure comes from:
  - nodes of 4 GPUs (DeepSpeed's own 1-bit Adam tutorial launches 32 GPUs as 4 per node; the paper's
    GPUs per node are not in the material at hand, so 4 is taken from the tutorial);
  - one NIC per node, shared by its GPUs, at the measured rate the blog gives (4.1 Gbps on the
    Ethernet cluster, 32 Gbps on InfiniBand QDR), each direction; latency per NIC link 25 us on TCP
    and 1 us on InfiniBand (assumed: no figure is published);
  - inside a node each GPU on PCIe 3.0 x16 at 12 GB/s (the sustained figure devices.c uses for the
    P100), 1 us (assumed);
  - BERT-Large's 340M parameters (Devlin et al., 2019); FP16 gradients: the dense baseline's allreduce
    moves 2 bytes a parameter, simulated as n/2 4-byte words (the same bytes), while onebit moves one
    sign bit a parameter and a scale a chunk (its 16x against FP16);
  - the global batch of DeepSpeed's 1-bit Adam BERT configuration, 4096 sequences a step (its
    tutorial's train_batch_size), so each GPU computes 4096 / P sequences between two allreduces (16 a
    micro-step, accumulated);
  - compute at 272 sequences per second a V100, DeepSpeed's own BERT-Large throughput at sequence
    length 128 on one V100 (DeepSpeed blog, 2020-05-28), so a step's compute is 4096 / P / 272 s;
  - the dense baseline is the ring allreduce (NCCL's choice across nodes; in rank order it crosses each
    node's NIC once each way), the compressed one sparsim's onebit (all-to-all of compressed chunks,
    server-side error feedback, allgather of compressed chunks: DeepSpeed's compressed allreduce);
    no overlap of the allreduce with backward (gradient accumulation: one allreduce after the last
    micro-step).

The GPU count of the figures' 6.6x and 2x is not in the text at hand; the table gives P = 16 to 128.

usage: bench/onebit_adam.py [--build build] [--out runs/onebit-adam] [--ranks 16,32,64,128]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = 340_000_000           # BERT-Large (Devlin et al., 2019)
GLOBAL_BATCH = 4096       # DeepSpeed's 1-bit Adam BERT configuration (tutorial)
SEQ_PER_S = 272.0         # DeepSpeed, BERT-Large seq 128 on one V100 (blog, 2020-05-28)
GPUS_PER_NODE = 4         # DeepSpeed's 1-bit Adam tutorial (32 GPUs as 4 a node)
WARMUP = 0.15             # the blog's warm-up share of the steps
# fabric: (NIC rate each way, latency per NIC link, published compression-stage speedup)
FABRICS = {
    "ethernet": ("4.1Gbps", "25us", 6.6),     # 40 GbE, 4.1 Gbps by iperf (blog); latency assumed
    "infiniband": ("32Gbps", "1us", 2.0),     # 40 Gbps IB QDR, 32 Gbps by perftest (blog); latency assumed
}
PCIE = ("12GBps", "1us")  # PCIe 3.0 x16 sustained (devices.c's P100 note); latency assumed


def platform_xml(P, nic_bw, nic_lat):
    """nodes of 4 GPUs: each GPU on its own PCIe link to the node's NIC, the NIC to one switch"""
    nodes = (P + GPUS_PER_NODE - 1) // GPUS_PER_NODE
    out = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">', '<zone id="cluster" routing="Full">']
    for k in range(nodes):
        out.append(f'  <zone id="node{k}" routing="Full">')
        out.append(f'    <router id="nic{k}"/>')
        gpus = [g for g in range(k * GPUS_PER_NODE, min(P, (k + 1) * GPUS_PER_NODE))]
        for g in gpus:
            out.append(f'    <host id="gpu{g:04d}" speed="1Gf"/>')
            out.append(f'    <link id="pcie{g}" bandwidth="{PCIE[0]}" latency="{PCIE[1]}" sharing_policy="SPLITDUPLEX"/>')
        for g in gpus:
            out.append(f'    <route src="gpu{g:04d}" dst="nic{k}" symmetrical="NO"><link_ctn id="pcie{g}" direction="UP"/></route>')
            out.append(f'    <route src="nic{k}" dst="gpu{g:04d}" symmetrical="NO"><link_ctn id="pcie{g}" direction="DOWN"/></route>')
            for h in gpus:
                if h != g:
                    out.append(f'    <route src="gpu{g:04d}" dst="gpu{h:04d}" symmetrical="NO">'
                               f'<link_ctn id="pcie{g}" direction="UP"/><link_ctn id="pcie{h}" direction="DOWN"/></route>')
        out.append('  </zone>')
    for k in range(nodes):
        out.append(f'  <link id="eth{k}" bandwidth="{nic_bw}" latency="{nic_lat}" sharing_policy="SPLITDUPLEX"/>')
    for a in range(nodes):
        for b in range(nodes):
            if a != b:
                out.append(f'  <zoneRoute src="node{a}" dst="node{b}" gw_src="nic{a}" gw_dst="nic{b}" symmetrical="NO">'
                           f'<link_ctn id="eth{a}" direction="UP"/><link_ctn id="eth{b}" direction="DOWN"/></zoneRoute>')
    out += ['</zone>', '</platform>', '']
    return "\n".join(out)


def run(sparsim, algo, n, P, xml, out, compute):
    o = os.path.join(out, f"{algo}")
    cmd = [sparsim, "run", "--algo", algo, "--ranks", str(P), "--platform", xml, "--n", str(n),
           "--payload", "size", "--device", "v100", "--train-compute", repr(compute),
           "--batch", str(GLOBAL_BATCH // P), "--iters", "2", "--out", o, "--quiet", "--no-csv", "--no-trace"]
    subprocess.run(cmd, check=True)
    return json.load(open(os.path.join(o, "summary.json")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "runs", "onebit-adam"))
    ap.add_argument("--ranks", default="16,32,64,128")
    a = ap.parse_args()
    sparsim = os.path.join(a.build, "sparsim")
    print("| fabric | P | compute s | Adam (ring, FP16): allreduce s | 1-bit: allreduce s | "
          "compression stage: x Adam | published | ratio | end to end (15% warm-up) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fabric, (bw, lat, published) in FABRICS.items():
        for P in [int(x) for x in a.ranks.split(",")]:
            if P % GPUS_PER_NODE or P < 2 * GPUS_PER_NODE:
                sys.exit(f"onebit_adam.py: P = {P} is not a multiple of {GPUS_PER_NODE} GPUs a node on two nodes or more")
            out = os.path.join(a.out, f"{fabric}-P{P}")
            os.makedirs(out, exist_ok=True)
            xml = os.path.join(out, "platform.xml")
            with open(xml, "w") as f:
                f.write(platform_xml(P, bw, lat))
            compute = GLOBAL_BATCH / P / SEQ_PER_S
            dense = run(sparsim, "ring", N // 2, P, xml, out, compute)
            onebit = run(sparsim, "onebit", N, P, xml, out, compute)
            itd, it1 = dense["training"]["iteration_s"], onebit["training"]["iteration_s"]
            s = itd / it1
            e2e = 1.0 / (WARMUP + (1 - WARMUP) / s)
            print(f"| {fabric} | {P} | {compute:.3f} | {itd - compute:.3f} | {it1 - compute:.3f} | {s:.2f} | "
                  f"{published} | {s / published:.2f} | {e2e:.2f} |", flush=True)


if __name__ == "__main__":
    main()
