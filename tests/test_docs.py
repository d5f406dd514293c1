#!/usr/bin/env python3
"""The generated references in docs/ are those the code generates now.

docs/options.md comes from the option table (`sparsim run --help=markdown`),
docs/summary-json.md from traces/summary_keys.h (traces/summary_doc.py).
Each is generated again and compared with the committed copy; a difference
fails, naming the file and the command that refreshes it.

usage: test_docs.py SPARSIM REPO_ROOT
"""
import difflib
import os
import subprocess
import sys


def generated(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.decode().strip()))
    return r.stdout.decode("utf-8")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    sparsim, root = sys.argv[1], sys.argv[2]
    refs = [
        ("docs/options.md", [sparsim, "run", "--help=markdown"],
         "build/sparsim run --help=markdown > docs/options.md"),
        ("docs/summary-json.md", [sys.executable, os.path.join(root, "traces", "summary_doc.py")],
         "python3 traces/summary_doc.py > docs/summary-json.md"),
    ]
    failed = 0
    for rel, cmd, refresh in refs:
        try:
            want = generated(cmd)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            print("FAIL %s: %s" % (rel, e))
            failed += 1
            continue
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                have = f.read()
        except OSError as e:
            have = None
            print("FAIL %s: %s" % (rel, e.strerror))
        if have == want:
            print("ok   %s is what the code generates" % rel)
            continue
        if have is not None:
            diff = list(difflib.unified_diff(have.splitlines(), want.splitlines(), "committed", "generated",
                                             lineterm="", n=1))
            print("FAIL %s differs from what the code generates (first lines of the difference):" % rel)
            for line in diff[:12]:
                print("     " + line)
        print("     refresh it from the repository root with: %s" % refresh)
        failed += 1
    print("%d passed, %d failed" % (len(refs) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
