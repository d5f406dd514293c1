#!/usr/bin/env python3
"""Past the actors' guard pages: more ranks than guarded stacks fit in vm.max_map_count.

- gTop-k at P = 32,768 (about 65,500 memory mappings if every stack had its guard page, past Linux's
  default 65,530) starts and ends: 2(P - 1) messages per iteration, 4k log2 P words per rank (its
  bound, ratio 1), and the simulated time equals the alpha-beta prediction of its uncontended rounds;
- P = 65,537 is refused in one line, exit 2, before anything starts.

usage: test_scale.py SPARSIM
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SPARSIM = sys.argv[1]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


tmp = tempfile.mkdtemp(prefix="sparsim-test-scale-")
try:
    P = 32768
    out = os.path.join(tmp, "big")
    r = subprocess.run([SPARSIM, "run", "--algo", "gtopk", "--ranks", str(P), "--n", "1M", "--iters", "1",
                        "--platform", "1gbe", "--network", "cm02", "--out", out, "--no-trace", "--quiet"],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, "gtopk at P = %d runs: %s" % (P, r.stderr.strip()[-300:]))
    if r.returncode == 0:
        s = json.load(open(os.path.join(out, "summary.json")))
        check(s["config"]["ranks"] == P and len(s["ranks"]["sent_bytes"]) == P and s["messages"] == 2 * (P - 1),
              "P = %d: %d messages, expected 2(P-1) = %d" % (P, s["messages"], 2 * (P - 1)))
        check(s["bound"]["ratio"] == 1 and s["bound"]["words"] == 4 * s["k"] * 15,
              "P = %d: %r words per rank, expected 4k log2 P = %d" % (P, s["bound"], 4 * s["k"] * 15))
        ratio = s["prediction"]["measured_over_predicted"]
        check(abs(ratio - 1) <= 1e-9, "P = %d: simulated / predicted time %.12g, expected 1" % (P, ratio))
    r = subprocess.run([SPARSIM, "run", "--algo", "ring", "--ranks", "65537", "--out", os.path.join(tmp, "no")],
                       capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and "1..65536" in lines[0] and not os.path.exists(os.path.join(tmp, "no")),
          "P = 65537: exit %d, %r" % (r.returncode, lines))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (5 - len(failures), len(failures)))
sys.exit(1 if failures else 0)
