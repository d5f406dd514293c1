#!/usr/bin/python3
"""bench/onebit_adam.py's cluster (nodes of 4 GPUs sharing one NIC, one switch) on
cm02 with device none, P = 8 on two nodes: the ring's time equals its closed form
2(P-1)(alpha + 4n/P / B) with alpha the route's four latencies and B the NIC's
rate (in rank order one ring flow a direction crosses each NIC); onebit moves
2(P-1) messages of a scale and n/(8P) sign bytes a rank, and takes at least the
time its bytes need through one node's NIC (16 chunks a phase leave a node);
the script's table runs and a rank count that is not whole nodes is refused.

usage: test_onebit_adam.py SPARSIM SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SPARSIM, SRC = sys.argv[1:3]
sys.path.insert(0, os.path.join(SRC, "bench"))
import onebit_adam  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


P, N = 8, 1 << 20
NIC = 4.1e9 / 8                  # bytes/s
ALPHA = 2 * 1e-6 + 2 * 25e-6     # two PCIe links and two NIC links
tmp = tempfile.mkdtemp(prefix="sparsim-test-onebit-adam-")
try:
    xml = os.path.join(tmp, "p8.xml")
    with open(xml, "w") as f:
        f.write(onebit_adam.platform_xml(P, "4.1Gbps", "25us"))
    got = {}
    for algo in ("ring", "onebit"):
        out = os.path.join(tmp, algo)
        r = subprocess.run([SPARSIM, "run", "--algo", algo, "--ranks", str(P), "--platform", xml, "--network", "cm02",
                            "--device", "none", "--payload", "size", "--n", str(N), "--iters", "1", "--out", out,
                            "--quiet", "--no-csv", "--no-trace"], capture_output=True, text=True)
        check(r.returncode == 0, f"{algo} runs on the generated cluster ({r.stderr.strip()[-200:]})")
        got[algo] = json.load(open(os.path.join(out, "summary.json"))) if r.returncode == 0 else None
    if got["ring"]:
        t = got["ring"]["time_per_iter_s"]["max"]
        want = 2 * (P - 1) * (ALPHA + 4 * N / P / NIC)
        check(abs(t - want) <= 1e-9 * want, f"ring {t!r} s equals 2(P-1)(alpha + 4n/P / B) = {want!r} s")
    if got["onebit"]:
        chunk = 4 + (N // P + 7) // 8
        check(got["onebit"]["bytes"] == P * 2 * (P - 1) * chunk,
              f"onebit's bytes {got['onebit']['bytes']} = P 2(P-1) (4 + n/(8P)) = {P * 2 * (P - 1) * chunk}")
        t = got["onebit"]["time_per_iter_s"]["max"]
        floor = 2 * 16 * chunk / NIC
        check(floor <= t <= 1.5 * floor + 2 * (P - 1) * ALPHA,
              f"onebit {t:.6f} s is at least a node's NIC time {floor:.6f} s and within 1.5x of it plus latencies")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "bench", "onebit_adam.py"), "--build",
                        os.path.dirname(SPARSIM), "--ranks", "8", "--out", os.path.join(tmp, "table")],
                       capture_output=True, text=True)
    rows = [l for l in r.stdout.splitlines() if l.startswith("| ethernet | 8 ") or l.startswith("| infiniband | 8 ")]
    check(r.returncode == 0 and len(rows) == 2, f"the table runs at P = 8 ({r.stderr.strip()[-200:]})")
    r = subprocess.run(["/usr/bin/python3", os.path.join(SRC, "bench", "onebit_adam.py"), "--build",
                        os.path.dirname(SPARSIM), "--ranks", "6", "--out", os.path.join(tmp, "bad")],
                       capture_output=True, text=True)
    check(r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "multiple of 4" in r.stderr,
          f"P = 6 is refused in one line ({r.stderr.strip()})")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
