#!/usr/bin/env python3
"""sparsim's modern GPU-cluster platforms held against published measurements
(issue 24, item 5; the table and its verdicts are in bench/modern.md).

One row per published number: nccl-tests all_reduce_perf bus bandwidths on
DGX/HGX H100, H200 and B200 nodes, on two to 248 nodes over InfiniBand NDR and
RoCE, and on Alps' GH200 nodes over Slingshot-11; OSU point-to-point bandwidth
and latency on Alps; NVLink and NDR point-to-point figures.  For each row the
script runs the sparsim command that measures what the published number
measures and prints sparsim's figure, the ratio sparsim / published and the
verdict (within 15%, or the row's reason why not).

How each kind of row is measured:

  busbw   a collective: allreduce of the published size (bytes = 4 n, floats),
          nccl-tests' bus bandwidth from summary.json "nccl" (busbw_Bps).  Run
          twice: with the platform's own device profile (sparsim's default,
          which prices each step's reduction after its receive) and with
          --device none (the wire alone: NCCL reduces inside the copy kernels,
          so the wire is what bounds it).  The verdict is on the first.
  time    the same run's nccl-tests time (time_s), for the small-size rows.
  p2p_bw  one message between two GPUs, bytes / (t_done - t_post) from
          messages.csv.  The built-in platforms place 8 (dgx) or 4 (alps)
          ranks on every node and take whole nodes only, so a two-rank run
          cannot put its ranks on two nodes.  Recursive doubling does: at the
          step of distance G (the GPUs per node) rank 0 exchanges its whole
          vector with rank G, which is local GPU 0 of the next node, on the
          same rail (dgx: NIC 0 to NIC 0 through one leaf switch; alps: NIC 0
          to NIC 0 on one switch of the chassis); the step of distance 1 pairs
          rank 0 with rank 1 on NVLink.  Every other pair of that step uses
          its own NIC or NVLink port, so the measured message shares no link.
  p2p_lat the same message at 4 bytes: its t_done - t_post (one way).
  bibw    the step's two messages between the pair, in both directions at
          once: the sum of their bandwidths.

The algorithm is a field of each row ("algo").  NCCL's own algorithms
(nccl-ring, nccl-tree, nccl = the tuner's choice) are not in sparsim yet;
each collective row also names the one NCCL ran ("nccl_algo").  With
--nccl-algos, rows whose nccl_algo the build lists (`sparsim list`) run it
instead of the flat ring; rows whose algorithm is missing keep "algo" and say
so.

Prints one markdown table and writes every figure to OUT/modern.json.

usage: bench/modern_validation.py [--build build] [--out runs/modern] [--nccl-algos] [--only ID,ID]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

# Sources: NCCL_I = github.com/NVIDIA/nccl/issues, TESTS_I = github.com/NVIDIA/nccl-tests/issues,
# CSCS_NCCL = github.com/eth-cscs/cscs-docs docs/software/communication/nccl.md ("NCCL Performance"),
# CSCS_OSU = github.com/eth-cscs/cscs-docs docs/software/container-engine/guidelines-images/image-mpich.md
# ("Performance examples", OSU 7.5 with MPICH over libfabric/CXI).
NCCL_I = "https://github.com/NVIDIA/nccl/issues/"
TESTS_I = "https://github.com/NVIDIA/nccl-tests/issues/"
CSCS_NCCL = "eth-cscs/cscs-docs, docs/software/communication/nccl.md, section NCCL Performance"
CSCS_OSU = ("eth-cscs/cscs-docs, docs/software/container-engine/guidelines-images/image-mpich.md, "
            "section Performance examples")

GiB = 1024 ** 3
MiB = 1024 ** 2

ROWS = [
    # ---- inside one node: NVLink ----
    dict(id="h100-nvlink-p2p", kind="p2p_bw", unit="GB/s", published=380.0,
         setting="1 node of 8 H100 SXM (HGX), GPU 0 to GPU 1 over NVLink 4, one way, large copies "
                 "(CUDA p2pBandwidthLatencyTest, copy engines)",
         source=NCCL_I + "1264 (description: 380 of 450 GB/s one way)", sure="read",
         platform="dgx-h100:1", ranks=8, n=64 * MiB, algo="recdoubling", pair=(0, 1),
         why="sparsim runs NVLink at the data sheet's 450 GB/s; the measured copy reaches about 84% of it "
             "(platforms.c says so and keeps line rate)"),
    dict(id="h100-nvlink-bibw", kind="bibw", unit="GB/s", published=749.0,
         setting="1 node of 8 H100 SXM, GPU pair over NVLink 4, both directions at once (p2pBandwidthLatencyTest)",
         source=NCCL_I + "1264 (description: 749 of 900 GB/s bidirectional)", sure="read",
         platform="dgx-h100:1", ranks=8, n=64 * MiB, algo="recdoubling", pair=(0, 1),
         why="as the one-way row: line rate 2 x 450 against a measured 83% of it"),
    dict(id="gh200-nvlink-osu", kind="p2p_bw", unit="GB/s", published=113.96,
         setting="Alps, 1 node of 4 GH200, GPU to GPU, osu_bw D D at 4 MiB (MPICH, libfabric)",
         source=CSCS_OSU + " (GPU-to-GPU intra-node osu_bw: 113955.83 MB/s at 4194304 B)", sure="read",
         platform="alps:1", ranks=4, n=1 * MiB, algo="recdoubling", pair=(0, 1),
         why="the published curve is still climbing at 4 MiB (102 GB/s at 2 MiB), so it is not the link's peak; "
             "sparsim's 150 GB/s per GPU pair is the table's own assumption (6 NVLink 4 links), not a measurement"),
    # ---- inside one node: allreduce ----
    dict(id="h100-1n-ring", kind="busbw", unit="GB/s", published=367.5,
         setting="1 node of 8 H100 SXM, nccl-tests all_reduce_perf, NCCL_ALGO=RING, 2-4 GB",
         source=NCCL_I + "1455 (description: busbw about 365-370 GB/s with ALGO=RING); "
                "the same ~370 GB/s from a maintainer in " + TESTS_I + "212", sure="read",
         platform="dgx-h100:1", ranks=8, n=512 * MiB, algo="ring", nccl_algo="nccl-ring",
         why_nccl="nccl-ring: 8 channels through the NVSwitch at NVLink's line rate on the wire (450 GB/s); each step's reduction, fused but not overlapped with the transfer, brings it to the measured figure, where NCCL loses about 20% to its protocol instead",
         why="on the wire alone sparsim's ring runs at NVLink's line rate (450 GB/s), NCCL at about 80% of it "
             "(protocol overhead, said by the maintainer in nccl-tests issue 212); the default run lands near the "
             "measurement only because it adds each step's reduction after the receive, which NCCL overlaps"),
    dict(id="h100-1n-nvls", kind="busbw", unit="GB/s", published=476.0,
         setting="1 node of 8 H100 SXM, nccl-tests all_reduce_perf, NCCL's default (NVLink SHARP), large sizes",
         source=TESTS_I + "290 (476 GB/s, called in the expected range by a maintainer; ~480 GB/s in "
                + TESTS_I + "212)", sure="read",
         platform="dgx-h100:1", ranks=8, n=1 * GiB, algo="ring", nccl_algo="nccl",
         why_nccl="a fit, not a check: the tuner runs nccl-nvls, whose NVSwitch intake (topologies/platforms.c) is fitted to this figure; H200's row checks it",
         why="NCCL reduces in the NVSwitch (NVLS), which sparsim does not model; a flat ring at line rate "
             "cannot pass 450 GB/s of busbw, and the default run prices the reductions on top"),
    dict(id="h200-1n", kind="busbw", unit="GB/s", published=475.0,
         setting="1 node of 8 H200, nccl-tests all_reduce_perf -b 64k -e 4G, NCCL's default, peak (4 GB)",
         source=TESTS_I + "272 (description: peak bandwidth of 475 GB/s)", sure="read",
         platform="dgx-h200:1", ranks=8, n=1 * GiB, algo="ring", nccl_algo="nccl",
         why_nccl="the check of H100's fit: nccl-nvls on the same NVSwitch (gen 3), whose intake was fitted to H100's 476 GB/s, against H200's own measurement",
         why="as for H100: NVLS busbw is above what any ring can reach on 450 GB/s ports"),
    dict(id="b200-1n", kind="busbw", unit="GB/s", published=830.0,
         setting="1 node of 8 B200, nccl-tests all_reduce_perf, NCCL 2.27, NCCL's default, peak",
         source=NCCL_I + "1807 (description: \"830+\" busbw on 8 B200 in one machine)", sure="read",
         platform="dgx-b200:1", ranks=8, n=1 * GiB, algo="ring", nccl_algo="nccl",
         why_nccl="the tuner keeps nccl-ring: on the wire NVLink 5's line rate (900 GB/s) beats the NVLS intake fitted to this very figure (830), and the forms do not price the ring's reductions, which bring the run to 735; nccl-nvls itself gives the fitted 830",
         why="the wire-only ring sits at NVLink 5's line rate (900 GB/s); NCCL measured 830"),
    # ---- between nodes: point to point ----
    dict(id="ndr-gdr-bw", kind="p2p_bw", unit="GB/s", published=49.5,
         setting="2 HGX H100 nodes (Dell XE9680), one ConnectX-7 NDR port each, GPU memory to GPU memory, "
                 "ib_send_bw --use_cuda, large messages",
         source=TESTS_I + "309 (description: 396 with GPUDirect; written \"GB/s\", but one 400 Gb/s port "
                "cannot pass 50 GB/s, so Gb/s: 49.5 GB/s)", sure="read (unit corrected)",
         platform="dgx-h100:2", ranks=16, n=64 * MiB, algo="recdoubling", pair=(0, 8),
         why="one NIC at its line rate of 400 Gb/s, which the measurement reaches to 1%"),
    dict(id="ndr-lat", kind="p2p_lat", unit="us", published=1.0,
         setting="2 nodes, one ConnectX-7 NDR port each, small-message one-way latency (osu_latency / ib_send_lat)",
         source="recalled: about 1 us for NDR host-to-host; not found in the sources searched", sure="recalled",
         platform="dgx-h100:2", ranks=16, n=1, algo="recdoubling", pair=(0, 8),
         why="the route's wire latency, two NICs of 500 ns (SimAI's figure) and one leaf switch of 130 ns "
             "(assumed); the published figure is recalled, so the row checks the order of magnitude only"),
    dict(id="alps-osu-bw", kind="p2p_bw", unit="GB/s", published=24.0,
         setting="Alps, 2 GH200 nodes, one rank each, GPU to GPU, osu_bw D D at 4 MiB (MPICH, libfabric/CXI)",
         source=CSCS_OSU + " (GPU-to-GPU inter-node osu_bw: 23998.79 MB/s at 4194304 B)", sure="read",
         platform="alps:2", ranks=8, n=1 * MiB, algo="recdoubling", pair=(0, 4),
         why="one Slingshot NIC at its line rate of 200 Gb/s; the measurement reaches 96% of it at 4 MiB"),
    dict(id="alps-osu-lat", kind="p2p_lat", unit="us", published=3.00,
         setting="Alps, 2 GH200 nodes, one rank each, host memory, osu_latency at 1 B (MPICH, libfabric/CXI)",
         source=CSCS_OSU + " (CPU-to-CPU inter-node osu_latency: 3.00 us at 1 B)", sure="read",
         platform="alps:2", ranks=8, n=1, algo="recdoubling", pair=(0, 4),
         why="sparsim counts the wire only (two NICs of 500 ns and one switch of 300 ns); the measured 3 us is "
             "mostly MPI and libfabric software on both ends, which no platform row charges"),
    # ---- between nodes: allreduce ----
    dict(id="alps-2n-128M", kind="busbw", unit="GB/s", published=122.57,
         setting="Alps, 2 nodes x 4 GH200 (8 ranks), nccl-tests all_reduce_perf at 128 MiB, aws-ofi-nccl, "
                 "NCCL's default",
         source=CSCS_NCCL + " (out-of-place busbw 122.57 GB/s at 134217728 B)", sure="read",
         platform="alps:2", ranks=8, n=32 * MiB, algo="ring", nccl_algo="nccl",
         why_nccl="the tuner's nccl-tree on two nodes sends half of the ring's bytes off the node over the four "
                  "200 Gb/s NICs (158 GB/s on the wire); the GH200 reductions, one per pipeline slot since the tree's "
                  "slots wait for all their lanes at once, take 7% of it; NCCL's protocol overhead, which no row "
                  "charges, is the likely rest",
         why="the flat ring crosses between the nodes on one 200 Gb/s NIC (25 GB/s), NCCL on all four; and on two "
             "nodes NCCL's tree can report busbw above the NICs' sum"),
    dict(id="alps-2n-8B", kind="time", unit="us", published=17.93,
         setting="Alps, 2 nodes x 4 GH200, nccl-tests all_reduce_perf at 8 B (2 floats): time",
         source=CSCS_NCCL + " (out-of-place time 17.93 us at 8 B)", sure="read",
         platform="alps:2", ranks=8, n=2, algo="ring", nccl_algo="nccl",
         why_nccl="sparsim is too fast: nccl-tree's few hops on the wire take 2.75 us, while the measured 18 us is NCCL's kernel launch and protocol overhead, which no row charges",
         why="sparsim is slower: the flat ring runs 2(P-1) = 14 steps one after another, each paced by a hop "
             "between the nodes of about 1.6 us on the wire (22.4 us, 1.25x, with --device none), and the default "
             "run adds a 5 us launch to each of the 7 reduction kernels (devices.c, a recalled figure); NCCL at 8 B "
             "takes a low-latency protocol and reduces inside its copy kernel, without a launch per step"),
    dict(id="h100-2n-ring", kind="busbw", unit="GB/s", published=376.0,
         setting="2 nodes x 8 H100 (16 ranks), 8 ConnectX-7 NDR per node, nccl-tests all_reduce_perf, "
                 "NCCL_ALGO=RING, large sizes",
         source=TESTS_I + "290 (a maintainer: \"46-48GB/s per NIC\" for NDR; x 8 NICs = 368-384 GB/s busbw, "
                "midpoint taken)", sure="read (per NIC; the x 8 is ours)",
         platform="dgx-h100:2", ranks=16, n=1 * GiB, algo="ring", nccl_algo="nccl-ring",
         why_nccl='nccl-ring: one channel per rail, each crossing on its own NIC at 50 GB/s; 399 GB/s on the wire, 86% of it with the reductions priced',
         why="the flat ring over 16 ranks crosses between the nodes on one NIC (50 GB/s line rate), NCCL's ring "
             "runs 8+ channels, one per rail; per NIC sparsim's figure matches the maintainer's 46-48 GB/s"),
    dict(id="h100-4n", kind="busbw", unit="GB/s", published=365.84,
         setting="4 HGX H100 nodes x 8 GPUs (32 ranks), 8 ConnectX-7 NDR per node, nccl-tests all_reduce_perf, "
                 "no NCCL_ALGO in the command shown, maximum over the sweep",
         source=TESTS_I + "309 (comment: max busbw 365.84 GB/s on 4 nodes; 470 on 2 nodes, 480 on 1)", sure="read",
         platform="dgx-h100:4", ranks=32, n=1 * GiB, algo="ring", nccl_algo="nccl",
         why_nccl='as on 2 nodes: 8 rails at line rate on the wire (399 GB/s), the fused reductions on top',
         why="as on 2 nodes: one NIC per node for the flat ring against 8 rails for NCCL"),
    dict(id="h200-248n", kind="busbw", unit="GB/s", published=350.0,
         setting="248 nodes x 8 H200 (1984 ranks), 8 NICs per node (speed not stated; 400 Gb/s taken), "
                 "nccl-tests all_reduce_perf at "
                 "512 MB, NCCL's default, typical value",
         source=TESTS_I + "283 (description: \"typically measuring around 350G\", sometimes below 300)",
         sure="read",
         platform="dgx-h200:8", ranks=64, n=128 * MiB, algo="ring", nccl_algo="nccl",
         why_nccl="run at 8 nodes, not 248 (1984 ranks); the rail-aligned ring's busbw does not fall with the node count on a non-blocking fat-tree, so the stand-in gives the figure it would",
         why="run at 8 nodes, not 248 (a flat ring of 1984 ranks is 7.9M messages): the flat ring's busbw is "
             "bound by one NIC at any node count, so the stand-in gives the figure it would; NCCL uses all 8 rails"),
    dict(id="roce-5n", kind="busbw", unit="GB/s", published=190.0,
         setting="5 nodes x 8 H100 (40 ranks), 4 x 400 Gb/s RoCE per node, nccl-tests all_reduce_perf -b 1M -e 1G, "
                 "NCCL_ALGO=Ring, peak",
         source=NCCL_I + "1368 (description: ring busbw 190 GB/s, tree 150)", sure="read",
         platform="roce:5", ranks=40, n=256 * MiB, algo="ring", nccl_algo="nccl-ring",
         why_nccl="that cluster has 4 NICs of 400 Gb/s per node and the roce row 8; with half the NICs the ring's 318 GB/s would be about 160, near the measured 190",
         why="that cluster has 4 NICs per node and the roce row 8; per NIC the measurement is 47.5 GB/s and the "
             "flat ring, on one NIC, is near it; NCCL's ring uses all four"),
]


def listed_algorithms(B):
    r = subprocess.run([B, "list"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    names, on = set(), False
    for line in r.stdout.splitlines():
        if line.startswith("algorithms:"):
            on = True
            continue
        if on and line and not line.startswith(" "):
            break
        if on and line.strip():
            names.add(line.split()[0])
    return names


def sparsim(B, args, out, csv_needed):
    cmd = [B, "run"] + args + ["--payload", "size", "--iters", "1", "--out", out, "--quiet", "--no-trace"]
    if not csv_needed:
        cmd.append("--no-csv")
    t0 = time.time()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    return " ".join(["sparsim", "run"] + args + ["--payload", "size", "--iters", "1"]), s, time.time() - t0


def pair_messages(out, a, b):
    """the messages a -> b and b -> a of the first step that joins them"""
    fwd = back = None
    with open(os.path.join(out, "messages.csv")) as f:
        for m in csv.DictReader(f):
            src, dst = int(m["src"]), int(m["dst"])
            if fwd is None and (src, dst) == (a, b):
                fwd = m
            if back is None and (src, dst) == (b, a):
                back = m
    if fwd is None or back is None:
        sys.exit("no message between ranks %d and %d in %s" % (a, b, out))
    return fwd, back


def seconds(m):
    return float(m["t_done"]) - float(m["t_post"])


def measure(a, B, row, algo):
    out = os.path.join(a.out, row["id"])
    base = ["--algo", algo, "--platform", row["platform"], "--ranks", str(row["ranks"]), "--n", str(row["n"]),
            "--network", "cm02"]
    res = {"algo": algo}
    if row["kind"] in ("busbw", "time"):
        cmd, s, wall = sparsim(B, base, out, False)
        cmd0, s0, wall0 = sparsim(B, base + ["--device", "none"], out + "-wire", False)
        key = "busbw_Bps" if row["kind"] == "busbw" else "time_s"
        scale = 1e-9 if row["kind"] == "busbw" else 1e6
        res.update(command=cmd, value=s["nccl"][key] * scale, wire_value=s0["nccl"][key] * scale,
                   device=s["config"].get("device"), size_bytes=s["nccl"]["size_bytes"], wall_s=wall + wall0)
        return res
    cmd, s, wall = sparsim(B, base + ["--device", "none"], out, True)
    fwd, back = pair_messages(out, *row["pair"])
    res.update(command=cmd, wall_s=wall, message_bytes=int(fwd["bytes"]), phase=fwd["phase"],
               src_node=int(fwd["src_node"]), dst_node=int(fwd["dst_node"]))
    if row["kind"] == "p2p_bw":
        res["value"] = int(fwd["bytes"]) / seconds(fwd) * 1e-9
    elif row["kind"] == "bibw":
        res["value"] = (int(fwd["bytes"]) / seconds(fwd) + int(back["bytes"]) / seconds(back)) * 1e-9
    else:  # p2p_lat
        res["value"] = seconds(fwd) * 1e6
    return res


def verdict(row, ratio, nccl=False):
    why = row.get("why_nccl", row["why"]) if nccl else row["why"]
    if abs(ratio - 1) <= 0.15 + 1e-9:
        return "within 15%" + ("; " + why if why else "")
    return "not within 15%: " + why


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="runs/modern")
    ap.add_argument("--nccl-algos", action="store_true",
                    help="run each collective row's nccl_algo where the build has it (else its algo)")
    ap.add_argument("--only", help="a comma list of row ids")
    a = ap.parse_args()
    B = os.path.abspath(os.path.join(a.build, "sparsim"))
    os.makedirs(a.out, exist_ok=True)
    have = listed_algorithms(B)
    only = set(a.only.split(",")) if a.only else None
    t0 = time.time()
    results = []
    print("| row | setting | published (source, how sure) | sparsim | sparsim, wire only | ratio | verdict | "
          "command |")
    print("|---|---|---|---|---|---|---|---|")
    for row in ROWS:
        if only and row["id"] not in only:
            continue
        algo, note = row["algo"], ""
        if a.nccl_algos and row.get("nccl_algo"):
            if row["nccl_algo"] in have or (row["nccl_algo"] == "nccl" and "nccl-ring" in have):
                algo = row["nccl_algo"]
            else:
                note = " (%s not in this build: %s ran)" % (row["nccl_algo"], algo)
        res = measure(a, B, row, algo)
        ratio = res["value"] / row["published"]
        v = verdict(row, ratio, algo != row["algo"]) + note
        results.append(dict(row, pair=row.get("pair"), sparsim=res, ratio=ratio, verdict=v))
        wire = "%.4g %s" % (res["wire_value"], row["unit"]) if "wire_value" in res else "-"
        print("| %s | %s | %.4g %s (%s; %s) | %.4g %s | %s | %.2f | %s | `%s` |" % (
            row["id"], row["setting"], row["published"], row["unit"], row["source"], row["sure"], res["value"],
            row["unit"], wire, ratio, v, res["command"]))
        sys.stdout.flush()
    total = time.time() - t0
    print("\n%d rows in %.1f s" % (len(results), total))
    with open(os.path.join(a.out, "modern.json"), "w") as f:
        json.dump({"rows": results, "wall_s": total, "nccl_algorithms_in_build": sorted(have & {
            "nccl", "nccl-ring", "nccl-tree"})}, f, indent=1)


if __name__ == "__main__":
    main()
