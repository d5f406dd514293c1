#!/usr/bin/env python3
"""Every algorithm's message list on fixed inputs, held against recorded lists.

A change that means to keep behaviour (a refactor, a speed-up) must leave
every message of these runs as it was: its iteration, phase, ends, tag,
bytes, and the simulated times at which it was posted and delivered.  The
cases (tests/golden/cases.txt, one run per line) cover exact payloads from a
fixed gradient file (tests/golden/grad.npy) on a user XML platform
(tests/golden/platform.xml) under cm02, model and size payloads on the
built-in platforms, daint's routing, the small-message bypass and a disturbed
run.  The recorded lists are tests/golden/NAME.csv.gz.

A change that means to alter message lists records them anew and says why in
its commit:

usage: test_golden.py SPARSIM [--record]
"""
import gzip
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def cases():
    """(name, arguments) per line of cases.txt; '@' stands for the golden folder"""
    out = []
    with open(os.path.join(HERE, "cases.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, args = line.split(":", 1)
                out.append((name.strip(), [a.replace("@", HERE) for a in shlex.split(args)]))
    return out


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "line %d: recorded %r, now %r" % (i + 1, x, y)
    return "recorded %d lines, now %d" % (len(a), len(b))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sparsim = sys.argv[1]
    record = "--record" in sys.argv[2:]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="sparsim-golden-") as tmp:
        for name, args in cases():
            out = os.path.join(tmp, name)
            cmd = [sparsim, "run", "--quiet", "--no-trace", "--out", out] + args
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
                failed += 1
                continue
            with open(os.path.join(out, "messages.csv"), "rb") as f:
                now = f.read()
            path = os.path.join(HERE, name + ".csv.gz")
            if record:
                with gzip.GzipFile(path, "wb", mtime=0) as g:
                    g.write(now)
                print("recorded %s: %d messages" % (name, now.count(b"\n") - 1))
                passed += 1
                continue
            with gzip.open(path, "rb") as g:
                then = g.read()
            if now == then:
                print("ok   %s: %d messages as recorded" % (name, now.count(b"\n") - 1))
                passed += 1
            else:
                print("FAIL %s: the message list changed: %s"
                      % (name, first_difference(then.decode().splitlines(), now.decode().splitlines())))
                failed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
