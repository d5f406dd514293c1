#!/usr/bin/env python3
"""sparsim-mpi --select cuda against the same run on the CPU (run by ctest).

Every algorithm, P = 1, 3 and 4, an odd n, several iterations (error feedback
between them), from a gradient file (and at P = 4 from the generator): the result is the
same bits, the message list is the same (sparsim compare; and as the
simulator's, from the gradient file), and the run
records its GPU copy time (phase gpu-copy, stat gpu_copy_s).  Also: --select
cuda on the simulator and on a model workload is refused in one line.

Without a GPU, or in a build without CUDA, it says it is skipped and why, on
stderr, and exits 77 (ctest's SKIP_RETURN_CODE): never a pass.

With --emulated, SPARSIM_MPI is sparsim-mpi-emu, where the CPU plays the GPU
(select_cuda_emu.c): the same checks, on any machine, of everything around the
kernels (P = 3 and 4, from the gradient file).
With --quick (the sanitizer build) only P = 4.  --ranks LIST runs the
gradient-file checks at those rank counts instead (bench/device/run.sh: P = 1,
2, 3, 4 and 8 ranks sharing one GPU; the generator's at P = 4 if listed).
usage: test_cuda_mpi.py SPARSIM SPARSIM_MPI [--emulated] [--quick] [--ranks 1,2,4,8]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SPARSIM, SPARSIM_MPI = sys.argv[1:3]
EMULATED = "--emulated" in sys.argv[3:]
QUICK = "--quick" in sys.argv[3:]  # the sanitizer build: P = 4 only
RANKS = None
if "--ranks" in sys.argv[3:]:
    i = sys.argv.index("--ranks")
    try:
        RANKS = tuple(int(x) for x in sys.argv[i + 1].split(","))
    except (IndexError, ValueError):
        RANKS = ()
    if not RANKS or min(RANKS) < 1:
        sys.exit("test_cuda_mpi.py: --ranks takes rank counts from 1 up, such as 1,2,4,8")
import mpi_common
from mpi_common import ALGOS, check, checks, failures, write_npy  # noqa: F401


def run(cmd, timeout=300):
    return mpi_common.run(cmd, timeout)


def mpirun(P, args, timeout=300):
    return mpi_common.mpirun(SPARSIM_MPI, P, args, timeout)


def main():
    # refused before anything runs, with or without a GPU
    r = run([SPARSIM, "run", "--algo", "topka", "--ranks", "4", "--n", "1000", "--select", "cuda"])
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "sparsim-mpi" in r.stderr,
          "the simulator does not refuse --select cuda in one line: %d %r" % (r.returncode, r.stderr))
    # can this build, on this machine, run it at all?
    with tempfile.TemporaryDirectory() as tmp:
        probe = mpirun(1, ["run", "--algo", "topka", "--ranks", "1", "--n", "1000", "--density", "0.01",
                           "--select", "cuda", "--quiet", "--out", os.path.join(tmp, "probe")])
    if probe.returncode != 0 and not EMULATED:
        line = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "(no message)"
        if "built without CUDA" in line or "no CUDA device" in line:
            print("test_cuda_mpi: SKIPPED: %s" % line, file=sys.stderr)
            return 77
        print("FAIL: --select cuda on one rank failed: %s" % probe.stderr.strip(), file=sys.stderr)
        return 1
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        # the gradient files' tensors, for PowerSGD (a 100 x 1000 matrix, a vector)
        with open(os.path.join(tmp, "layers.json"), "w") as f:
            json.dump({"layers": [{"name": "w", "size": 100000, "shape": [100, 1000]},
                                  {"name": "b", "size": 3, "shape": [3]}]}, f)
        r = mpirun(2, ["run", "--algo", "topka", "--ranks", "2", "--n", "1000", "--density", "0.01", "--select",
                       "cuda", "--payload", "model", "--quiet", "--out", os.path.join(tmp, "m")])
        check(r.returncode == 2 and "exact payloads" in r.stderr,
              "a model workload with --select cuda is not refused: %d %r" % (r.returncode, r.stderr))
        for P in (RANKS or ((4,) if QUICK else (3, 4) if EMULATED else (1, 3, 4))):
            g = rng.standard_normal((3, P, 100003)).astype(np.float32)
            g[:, :, 17] = 2.5  # ties across ranks and within one
            g[:, :, 18] = -2.5
            gf = os.path.join(tmp, "g%d.npy" % P)
            write_npy(gf, g)
            sources = [["--grad-file", gf]] + ([["--n", "65537", "--iters", "3"]] if P == 4 and not EMULATED else [])
            for si, src in enumerate(sources):
                # every algorithm in one job a side (one after the other, each into DIR/NAME and its
                # result into FILE.NAME.npy): a job's start is most of a small run's time
                what = "P=%d %s" % (P, "file" if si == 0 else "generator")
                a = os.path.join(tmp, "cpu-%d-%d" % (P, si))
                b = os.path.join(tmp, "gpu-%d-%d" % (P, si))
                sim = os.path.join(tmp, "sim-%d" % P)
                common = ["run", "--algo", ",".join(ALGOS), "--ranks", str(P), "--density", "0.01", "--quiet"] + src
                r1 = mpirun(P, common + ["--dump-result", a + ".npy", "--out", a])
                r2 = mpirun(P, common + ["--select", "cuda", "--dump-result", b + ".npy", "--out", b])
                check(r1.returncode == 0 and r2.returncode == 0,
                      "%s: runs failed: %s | %s" % (what, r1.stderr.strip(), r2.stderr.strip()))
                if r1.returncode or r2.returncode:
                    continue
                if si == 0:  # and as the simulator
                    r3 = run([SPARSIM] + common + ["--dump-result", sim + ".npy", "--out", sim], 300)
                    check(r3.returncode == 0, "%s: the simulator failed: %s" % (what, r3.stderr.strip()))
                for algo in ALGOS:
                    at = "%s %s" % (algo, what)
                    res = lambda f: np.load("%s.%s.npy" % (f, algo)).tobytes()  # noqa: E731
                    check(res(a) == res(b), "%s: CPU and CUDA results differ" % at)
                    c = run([SPARSIM, "compare", os.path.join(a, algo), os.path.join(b, algo)])
                    check(c.returncode == 0 and "identical" in c.stdout,
                          "%s: message lists differ:\n%s%s" % (at, c.stdout, c.stderr))
                    if si == 0 and r3.returncode == 0:
                        check(res(sim) == res(b), "%s: the simulator's result differs from the CUDA run's" % at)
                        c = run([SPARSIM, "compare", os.path.join(sim, algo), os.path.join(b, algo)])
                        check(c.returncode == 0 and "identical" in c.stdout,
                              "%s: simulator and CUDA message lists differ:\n%s%s" % (at, c.stdout, c.stderr))
                    s = json.load(open(os.path.join(b, algo, "summary.json")))
                    text = json.dumps(s)
                    check("gpu_copy_s" in text and "gpu_kernel_s" in text,
                          "%s: summary.json has no GPU copy and kernel seconds" % at)
                    # the dense and compressed schemes select nothing: no pairs come back from the GPU;
                    # SparDL cuts partial sums on the host (docs/mpi-and-gpu.md)
                    sparse = algo not in ("ring", "recdoubling", "rabenseifner", "onebit", "qgz", "powersgd", "spardl")
                    check(not sparse or "gpu-copy" in text, "%s: no gpu-copy phase in summary.json" % at)
    print("%d checks, %d failed" % (checks(), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
