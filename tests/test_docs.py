#!/usr/bin/env python3
"""The generated references in docs/ are those the code generates now.

docs/options.md comes from the option table (`sparsim run --help=markdown`),
docs/summary-json.md from traces/summary_keys.h (traces/summary_doc.py).
Each is generated again and compared with the committed copy; a difference
fails, naming the file and the command that refreshes it.  Also: every
relative link in README.md and docs/*.md names a file that is there.

usage: test_docs.py SPARSIM REPO_ROOT
"""
import difflib
import glob
import os
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(root):
    """(page, target) for every relative link of the guide whose file is not there."""
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    bad = []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for target in LINK.findall(text):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a web address, or a place on the same page
            path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#", 1)[0]))
            if not os.path.exists(path):
                bad.append((os.path.relpath(page, root), target))
    return bad


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
    checks = len(refs) + 1
    bad = broken_links(root)
    for page, target in bad:
        print("FAIL %s links to %s, which is not there" % (page, target))
    if bad:
        failed += 1
    else:
        print("ok   every relative link of README.md and docs/ names a file that is there")
    print("%d passed, %d failed" % (checks - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
