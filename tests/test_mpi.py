#!/usr/bin/python3
"""The real-MPI backend under mpirun --oversubscribe (run by ctest).

- results equal the dense reference (numpy's sum) for P = 1..5, from a gradient file;
- every algorithm gives bit-identical results and the same message list as the
  SimGrid backend with the same inputs (P = 3 and 4);
- the SMPI build (smpicc, smpirun) sends the same messages too (the dense ring, two top-k schemes
  and the five added since: 1-bit, INT4, PowerSGD, ZEN, SparDL);
- failures: -np against --ranks, and a receive never matched, end the job with one
  clear line and no complete-looking output (nor temporaries);
- calibrate writes a platform (with the both-ways limiter) and a device profile that
  the simulator runs on, and the ring at P = 2 on it takes the alpha-beta time with
  the both-ways bandwidth.

usage: test_mpi.py SPARSIM SPARSIM_MPI SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

SPARSIM, SPARSIM_MPI, SRC = sys.argv[1:4]
import mpi_common
from mpi_common import ALGOS, check, checks, failures, run, write_npy  # noqa: F401


def mpirun(P, args, timeout=120):
    return mpi_common.mpirun(SPARSIM_MPI, P, args, timeout)


tmp = tempfile.mkdtemp(prefix="sparsim-mpi-test-")
try:
    rng = np.random.default_rng(5)
    n = 1001
    # dense algorithms against numpy, P = 1..5: the three in one job (one after the other, each into
    # DIR/NAME and its result into FILE.NAME.npy), as every comparison below: a job's start is most of
    # a small run's time, and more of it on a busy machine
    dense = ("ring", "recdoubling", "rabenseifner")
    for P in range(1, 6):
        g = rng.standard_normal((P, n)).astype(np.float32) * rng.uniform(0.1, 10, size=n).astype(np.float32)
        gf = os.path.join(tmp, "g%d.npy" % P)
        write_npy(gf, g)
        ref = g.astype(np.float64).sum(axis=0)
        out = os.path.join(tmp, "mpi-%d" % P)
        r = mpirun(P, ["run", "--algo", ",".join(dense), "--ranks", str(P), "--grad-file", gf, "--dump-result",
                       out + ".npy", "--out", out, "--quiet"])
        check(r.returncode == 0, "the dense schemes, P=%d under mpirun: %s" % (P, r.stderr.strip()))
        if r.returncode == 0:
            for algo in dense:
                res = np.load("%s.%s.npy" % (out, algo))
                check(np.allclose(res, ref, rtol=1e-5, atol=1e-5),
                      "%s P=%d: MPI result differs from the dense sum (max error %g)"
                      % (algo, P, float(np.max(np.abs(res - ref)))))
                check(os.path.exists(os.path.join(out, algo, "summary.json")), "%s P=%d: no summary.json" % (algo, P))

    # every algorithm: same result bits and same messages as the simulator
    # a folder of its own: its layers.json gives PowerSGD the tensors' shapes
    # (a 40 x 100 matrix and a vector; the other algorithms ignore them)
    shaped = os.path.join(tmp, "shaped")
    os.makedirs(shaped)
    with open(os.path.join(shaped, "layers.json"), "w") as f:
        json.dump({"layers": [{"name": "w", "size": 4000, "shape": [40, 100]},
                              {"name": "b", "size": 99, "shape": [99]}]}, f)
    for P in (3, 4):
        g = rng.standard_normal((2, P, 4099)).astype(np.float32)
        gf = os.path.join(shaped, "gi%d.npy" % P)
        write_npy(gf, g)
        a = os.path.join(tmp, "m-%d" % P)
        b = os.path.join(tmp, "s-%d" % P)
        common = ["--algo", ",".join(ALGOS), "--ranks", str(P), "--grad-file", gf, "--density", "0.02", "--quiet"]
        r1 = mpirun(P, ["run"] + common + ["--dump-result", a + ".npy", "--out", a], 300)
        r2 = run([SPARSIM, "run"] + common + ["--dump-result", b + ".npy", "--out", b], 300)
        check(r1.returncode == 0 and r2.returncode == 0,
              "every algorithm, P=%d: runs failed: %s %s" % (P, r1.stderr.strip(), r2.stderr.strip()))
        for algo in ALGOS if r1.returncode == 0 and r2.returncode == 0 else ():
            check(np.array_equal(np.load("%s.%s.npy" % (a, algo)), np.load("%s.%s.npy" % (b, algo))),
                  "%s P=%d: MPI and SimGrid results differ" % (algo, P))
            c = run([SPARSIM, "compare", os.path.join(a, algo), os.path.join(b, algo)])
            check(c.returncode == 0 and "identical" in c.stdout,
                  "%s P=%d: message lists differ:\n%s%s" % (algo, P, c.stdout, c.stderr))

    # SMPI: the MPI backend compiled with smpicc, run by smpirun
    if shutil.which("smpicc") and shutil.which("smpirun"):
        # at -O0 (SMPI_OPT): the message lists do not depend on it, and it compiles in 60% of the time
        b = run(["env", "SMPI_OPT=-O0", "bash", os.path.join(SRC, "scripts", "build-smpi.sh"),
                 os.path.join(tmp, "smpi-build")], 600)
        check(b.returncode == 0, "SMPI build failed: %s" % b.stderr[-2000:])
        if b.returncode == 0:
            smpi = os.path.join(tmp, "smpi-build", "sparsim-smpi")
            plat = os.path.join(tmp, "p4.xml")
            with open(plat, "w") as f:
                subprocess.run([SPARSIM, "platform", "1gbe", "--ranks", "4"], stdout=f, check=True)
            hosts = os.path.join(tmp, "hosts4")
            with open(hosts, "w") as f:
                f.write("".join("node-%d\n" % i for i in range(4)))
            algos = ("ring", "topka", "oktopk", "onebit", "qgz", "powersgd", "zen", "spardl")
            a = os.path.join(tmp, "smpi")
            r = run(["smpirun", "-np", "4", "-platform", plat, "-hostfile", hosts,
                     "--cfg=smpi/simulate-computation:no", "--log=root.thres:warning", smpi, "run", "--algo",
                     ",".join(algos), "--ranks", "4", "--n", "8192", "--iters", "2", "--out", a, "--quiet"], 300)
            check(r.returncode == 0, "under smpirun: %s" % r.stderr[-1000:])
            s = os.path.join(tmp, "sg")
            run([SPARSIM, "run", "--algo", ",".join(algos), "--ranks", "4", "--n", "8192", "--iters", "2", "--out", s,
                 "--quiet"], 300)
            for algo in algos:
                c = run([SPARSIM, "compare", os.path.join(a, algo), os.path.join(s, algo)])
                check(c.returncode == 0, "%s: SMPI and SimGrid message lists differ:\n%s" % (algo, c.stdout))

    # calibrate: a platform and a device profile the simulator runs on
    cal = os.path.join(tmp, "cal")
    r = mpirun(2, ["calibrate", "--out", cal, "--hosts", "4"])
    check(r.returncode == 0 and "calibrated:" in r.stdout, "calibrate: %s" % r.stderr[-500:])
    if r.returncode == 0:
        lines = [l for l in open(os.path.join(cal, "calibration.txt")) if not l.startswith("#")]
        check(len(lines) == 13 and all(len(l.split()) == 3 for l in lines),
              "calibration.txt: 13 sizes with one-way and both-ways times")
        last = [l for l in open(os.path.join(cal, "calibration.txt")) if l.startswith("# alpha")][0].split()
        alpha, bw, xbw = float(last[2]), float(last[5]), float(last[9])
        # LogP's split of alpha: o on each host (the device profile), the rest on the wire (the platform)
        ov = [l for l in open(os.path.join(cal, "calibration.txt")) if l.startswith("# overheads")][0]
        o_send = float(ov.split("o_send ")[1].split()[0])
        o_recv = float(ov.split("o_recv ")[1].split()[0])
        wire = float(ov.split("alpha less both) ")[1].split()[0])
        check(o_send >= 0 and o_recv >= 0 and wire > 0 and abs(o_send + o_recv + wire - alpha) <= 1e-6 * alpha,
              "overheads %g + %g and wire %g do not add up to alpha %g" % (o_send, o_recv, wire, alpha))
        dev = json.load(open(os.path.join(cal, "device.json")))
        check(abs(dev.get("send_o", -1) - o_send) <= 1e-6 * alpha and abs(dev.get("recv_o", -1) - o_recv) <= 1e-6 * alpha,
              "device.json's send_o and recv_o are not the measured ones: %r" % dev)
        xml = open(os.path.join(cal, "platform.xml")).read()
        lim = float(xml.split('limiter_link="')[1].split("Bps")[0])
        lat = float(xml.split(' lat="')[1].split("s")[0])
        check(abs(2 * lat - wire) <= 1e-5 * wire, "the platform's route latency %g is not the wire's %g" % (2 * lat, wire))
        check(abs(lim - 2 * min(bw, xbw)) <= 1e-5 * lim, "limiter %g is not twice min(%g, %g)" % (lim, bw, xbw))
        out = os.path.join(tmp, "on-cal")
        n = 1 << 20
        r = run([SPARSIM, "run", "--algo", "ring", "--ranks", "2", "--n", str(n), "--network", "cm02",
                 "--platform", os.path.join(cal, "platform.xml"), "--out", out, "--no-trace", "--quiet"])
        check(r.returncode == 0, "the simulator on the calibrated platform: %s" % r.stderr)
        if r.returncode == 0:
            t = json.load(open(os.path.join(out, "summary.json")))["time_per_iter_s"]["mean"]
            # two steps, each a 2 MiB exchange both ways: wire + bytes / min(bw, limiter / 2)
            want = 2 * (wire + 4.0 * n / 2 / min(bw, lim / 2))
            check(abs(t - want) <= 0.01 * want, "ring on the calibrated platform: %.6g s, expected %.6g s" % (t, want))
        # a busy machine measures a slow wire (here 0.9 ms a link): the time is still wire + bytes / bandwidth,
        # with no TCP window bound (gamma / 2 latency = 2.3 GB/s here) cutting the measured bandwidth
        slow = os.path.join(tmp, "slow.xml")
        with open(slow, "w") as f:
            f.write(xml.replace(' lat="%s' % xml.split(' lat="')[1].split('"')[0], ' lat="9e-4s'))
        out = os.path.join(tmp, "on-slow")
        r = run([SPARSIM, "run", "--algo", "ring", "--ranks", "2", "--n", str(n), "--network", "cm02",
                 "--platform", slow, "--out", out, "--no-trace", "--quiet"])
        check(r.returncode == 0, "the simulator on the slow calibrated platform: %s" % r.stderr)
        if r.returncode == 0:
            t = json.load(open(os.path.join(out, "summary.json")))["time_per_iter_s"]["mean"]
            want = 2 * (1.8e-3 + 4.0 * n / 2 / min(bw, lim / 2))
            check(abs(t - want) <= 1e-6 * want, "ring on a slow calibrated wire: %.6g s, expected %.6g s" % (t, want))
        # with the measured o charged (kernels free here), each step is o_send + wire + transfer + o_recv: the
        # measured alpha again, so a ping-pong simulated on both files takes what was measured (one float per
        # step, so that alpha is the time and o a visible part of it)
        odev = os.path.join(tmp, "o-only.json")
        with open(odev, "w") as f:
            json.dump({"name": "o-only", "launch": 0, "mem_bw": 0, "topk_coeff": 0, "scatter_bw": 0,
                       "send_o": dev.get("send_o", 0), "recv_o": dev.get("recv_o", 0)}, f)
        out = os.path.join(tmp, "on-cal-o")
        r = run([SPARSIM, "run", "--algo", "ring", "--ranks", "2", "--n", "2", "--network", "cm02", "--payload",
                 "size", "--device", odev, "--platform", os.path.join(cal, "platform.xml"), "--out", out,
                 "--no-trace", "--quiet"])
        check(r.returncode == 0, "the simulator with the calibrated overheads: %s" % r.stderr)
        if r.returncode == 0:
            t = json.load(open(os.path.join(out, "summary.json")))["time_per_iter_s"]["mean"]
            want = 2 * (alpha + 4.0 / min(bw, lim / 2))
            check(abs(t - want) <= 0.01 * want, "ring with the calibrated o: %.6g s, expected %.6g s (o_send %g, "
                  "o_recv %g, wire %g)" % (t, want, o_send, o_recv, wire))

    # a folder calibrate cannot create: one line, and no rank left waiting for the other
    blocker = os.path.join(tmp, "a-file")
    open(blocker, "w").close()
    r = mpirun(2, ["calibrate", "--out", os.path.join(blocker, "cal")], 60)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode != 0 and len(lines) == 1 and "cannot create" in lines[0],
          "calibrate into an impossible folder: rc %d, stderr %r" % (r.returncode, r.stderr))

    # failures end the job with one clear line
    out = os.path.join(tmp, "np")
    r = mpirun(3, ["run", "--algo", "ring", "--ranks", "4", "--out", out])
    check(r.returncode != 0, "-np 3 with --ranks 4 should fail")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "mpirun -np" in lines[0], "-np mismatch: stderr is %r" % r.stderr)
    check(not os.path.exists(os.path.join(out, "summary.json")), "-np mismatch left a summary.json")

    out = os.path.join(tmp, "hang")
    # (a watchdog of 5 s, as test_mpi_failures': with 2 s, a busy machine's MPI_Init alone outlasted it)
    r = mpirun(3, ["run", "--algo", "selftest-unmatched", "--ranks", "3", "--watchdog", "5", "--out", out], 60)
    check(r.returncode != 0, "an unmatched receive should end the job")
    check("can never be matched" in r.stderr and r.stderr.count("sparsim-mpi:") == 1,
          "unmatched receive: stderr is %r" % r.stderr)
    # the line names the rank that waited, where, and for whom
    check("rank 0 waited" in r.stderr and "phase unmatched of iteration 0" in r.stderr and
          "for a message from rank 2, tag 9999" in r.stderr, "unmatched receive: the line says %r" % r.stderr)
    check(not os.path.exists(os.path.join(out, "summary.json")) and
          not os.path.exists(os.path.join(out, "messages.csv")), "the hung run left complete-looking outputs")
    left = [f for f in os.listdir(out) if f.endswith(".part")] if os.path.isdir(out) else []
    check(not left, "the hung run left temporaries behind: %s" % left)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (checks() - len(failures), len(failures)))
sys.exit(1 if failures else 0)
