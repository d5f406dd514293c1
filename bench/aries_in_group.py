#!/usr/bin/env python3
"""daint's adaptive routing inside a dragonfly group (workload-and-routing issue, item 6; bench/README.md
section 20).

`daint` spreads traffic as adaptive routing's fluid limit at every level (a router's 15 green links as one,
the 16 black links between two chassis as one, the 50 global links between two groups as one);
`daint-static` keeps static minimal paths inside a group.  Three parts, each a markdown table on stdout:

  topka    TopkA's Bruck allgather (n = 16M floats, density 0.01) at P = 384 to 768 in steps of 16 on
           daint and daint-static (and on --before's daint, a build from before the change, when given):
           the simulated time, P = 400 over P = 384, and whether it grows monotonically with P.
  dense    the ring and Rabenseifner on daint at powers of two from 64 to --max-ranks (the ring up to
           --ring-max: its 2(P-1) steps of P flows make it the slowest to simulate), held against the
           links they cross: the ring's every step is NIC-bound (one flow per NIC, the aggregates it
           crosses carry one flow), so T = 2(P-1) (4n/P / 10 GB/s + L) and the table gives the latency
           per step L that the simulated time implies; Rabenseifner's recursive halving and doubling
           (rank i with rank i XOR d) are summed step by step as if every rank moved in lockstep, each
           flow at min(NIC, aggregate / flows sharing it) along its route.
  speed    the wall time of the ring, Rabenseifner, TopkA and gTop-k at P = 1024 (size payloads) and of
           Ok-Topk (model payloads), on this build's daint against --before's, side by side in one run.

cm02 (alpha-beta with max-min sharing), device none, one iteration (two for Ok-Topk), n = 16M floats.

usage: bench/aries_in_group.py [--build build] [--before OLD_BUILD] [--parts topka,dense,speed]
                               [--max-ranks 4096] [--ring-max 4096]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aries  # noqa: E402

N = 16 * 1048576                             # the floats of aries.run
NIC = 10e9                                   # simgrid_aries.cpp: a node's NIC per direction
ROUTER, BLACK, BLUE = 15 * 5.25e9, 16 * 15.75e9, 50 * 4.6875e9   # daint's aggregates per direction
LAT = {"router": 1.0e-6, "chassis": 1.1e-6, "group": 1.2e-6, "global": 1.5e-6}  # route latencies (upper)


def run(sparsim, algo, P, platform, payload="size", iters=1):
    """(simulated time per iteration, wall time) of one run, as bench/aries.py makes it"""
    with tempfile.TemporaryDirectory() as out:
        return aries.run(sparsim, algo, P, platform, out, payload, iters)


def topka(a):
    builds = [("daint", a.sparsim, "daint"), ("daint-static", a.sparsim, "daint-static")]
    if a.before:
        builds.append(("daint before", os.path.join(a.before, "sparsim"), "daint"))
    Ps = list(range(384, 769, 16))
    got = {name: [run(b, "topka", P, plat)[0] for P in Ps] for name, b, plat in builds}
    print("| P | " + " | ".join("%s (s)" % n for n, _, _ in builds) + " |")
    print("|---|" + "---|" * len(builds))
    for i, P in enumerate(Ps):
        print("| %d | " % P + " | ".join("%.4g" % got[n][i] for n, _, _ in builds) + " |")
    for n, _, _ in builds:
        t = got[n]
        mono = all(t[i + 1] >= t[i] for i in range(len(t) - 1))
        print("\n%s: P = 400 over P = 384 %.3f; monotone from 384 to 768: %s" % (n, t[1] / t[0], "yes" if mono else
                                                                               "no"))


def where(i):
    """router, chassis, group of node i"""
    return i // 4, i // 64, i // 384


def step_time(P, d, nbytes):
    """one lockstep step of ranks i -> i XOR d: the slowest flow's time and its route's latency"""
    load = {}
    routes = []
    for i in range(P):
        j = i ^ d
        (ri, ci, gi), (rj, cj, gj) = where(i), where(j)
        if ri == rj:
            aggs, lat = [], LAT["router"]
        elif ci == cj:
            aggs, lat = [("out", ri, ROUTER), ("in", rj, ROUTER)], LAT["chassis"]
        elif gi == gj:
            aggs, lat = [("black", ci, cj, BLACK)], LAT["group"]
        else:
            aggs, lat = [("blue", gi, gj, BLUE)], LAT["global"]
        for g in aggs:
            load[g] = load.get(g, 0) + 1
        routes.append((aggs, lat))
    worst = 0.0
    for aggs, lat in routes:
        rate = min([NIC] + [g[-1] / load[g] for g in aggs])
        worst = max(worst, nbytes / rate + lat)
    return worst


def rabenseifner_lockstep(P):
    t = 0.0
    d = P // 2
    while d >= 1:                                # reduce-scatter: halves of 4n / (P / d) ... down to 4n / P
        t += step_time(P, d, 4.0 * N * d / P)
        d //= 2
    d = 1
    while d < P:                                 # allgather: the same steps in reverse
        t += step_time(P, d, 4.0 * N * d / P)
        d *= 2
    return t


def dense(a):
    print("| P | ring (s) | ring: NIC term (s) | latency per step (us) | rabenseifner (s) | lockstep sum (s) "
          "| ratio | wall ring (s) | wall rabenseifner (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    P = 64
    while P <= a.max_ranks:
        ring, wring = run(a.sparsim, "ring", P, "daint") if P <= a.ring_max else (None, None)
        rab, wrab = run(a.sparsim, "rabenseifner", P, "daint")
        nic = 2 * (P - 1) * (4.0 * N / P) / NIC
        ls = rabenseifner_lockstep(P)
        cells = ["%d" % P]
        if ring is None:
            cells += ["-", "%.4g" % nic, "-"]
        else:
            cells += ["%.4g" % ring, "%.4g" % nic, "%.2f" % ((ring - nic) / (2 * (P - 1)) * 1e6)]
        cells += ["%.4g" % rab, "%.4g" % ls, "%.3f" % (rab / ls), "-" if wring is None else "%.1f" % wring,
                  "%.2f" % wrab]
        print("| " + " | ".join(cells) + " |")
        P *= 2


def speed(a):
    if not a.before:
        sys.exit("speed: give --before OLD_BUILD")
    old = os.path.join(a.before, "sparsim")
    print("| algorithm (P = 1024) | payload | simulated, before (s) | simulated, now (s) | wall before (s) "
          "| wall now (s) | now / before |")
    print("|---|---|---|---|---|---|---|")
    for algo, payload, iters in (("ring", "size", 1), ("rabenseifner", "size", 1), ("topka", "size", 1),
                                 ("gtopk", "size", 1), ("oktopk", "model", 2)):
        tb, wb = run(old, algo, 1024, "daint", payload, iters)
        tn, wn = run(a.sparsim, algo, 1024, "daint", payload, iters)
        print("| %s | %s | %.4g | %.4g | %.2f | %.2f | %.2f |" % (algo, payload, tb, tn, wb, wn, wn / wb))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--before", help="a build folder from before the change, for the side-by-side columns")
    ap.add_argument("--parts", default="topka,dense,speed")
    ap.add_argument("--max-ranks", type=int, default=4096)
    ap.add_argument("--ring-max", type=int, default=4096)
    a = ap.parse_args()
    a.sparsim = os.path.join(a.build, "sparsim")
    if not os.access(a.sparsim, os.X_OK):
        sys.exit("aries_in_group.py: no sparsim in %s (build first, or give --build)" % a.build)
    for part in a.parts.split(","):
        if part not in ("topka", "dense", "speed"):
            sys.exit("aries_in_group.py: unknown part '%s' (topka, dense, speed)" % part)
        print("\n### %s\n" % part)
        sys.stdout.flush()
        {"topka": topka, "dense": dense, "speed": speed}[part](a)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
