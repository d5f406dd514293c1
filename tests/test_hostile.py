#!/usr/bin/env python3
"""Hostile inputs against the contract of every command (docs/reliability.md).

Each case of tests/hostile/cases.json runs sparsim in a folder of its own and
checks: the exit status; for a failure exactly one line on stderr, starting
"sparsim: ", without control characters, matching the case's pattern (and
nothing on stdout for bad input); that no NAME.part file and no file the case
does not expect is left anywhere in its folder (its TMPDIR included); and
what the case asks besides (outputs present and regular, files unchanged,
CSV rows).  Then the endings a table cannot hold: SIGKILL of the `sparsim
run` parent (with SIGTERM ignored, as nohup-like launchers leave it), SIGQUIT,
SIGINT and SIGTERM, SIGKILL of a sweep, and a full disk (a small tmpfs the
test mounts; skipped with a message where mounting is not allowed).

With --moments it runs only SIGINT and SIGTERM at 15 chosen moments of a
short run instead (signals, not memory: scripts/test.sh runs them on the
plain build, the rest under the sanitizers).

usage: test_hostile.py SPARSIM [CORPUS_DIR [--moments]]
"""
import concurrent.futures
import csv
import io
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 300  # seconds per command; sanitizer builds are slow
RUN_BASE = ["run", "--algo", "ring", "--ranks", "4", "--n", "1K", "--out", "{W}/out"]  # "RUN" in a case

failures = []
skipped = []


def fail(name, why):
    failures.append("%s: %s" % (name, why))


def no_core():
    """Children dump no core files into the case folders."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def expand(args, work, corpus):
    out = []
    for a in args:
        if a == "RUN":
            out.extend(RUN_BASE)
        else:
            out.append(a)
    return [a.replace("{W}", work).replace("{H}", corpus) for a in out]


# AddressSanitizer's note on SimGrid's stack switching (every run of a
# sanitizer build prints it): the test environment's, not sparsim's output
ASAN_STACK_NOTE = re.compile(r"^==\d+==WARNING: ASan is ignoring requested __asan_handle_no_return.*\n"
                             r"False positive error reports may follow\n"
                             r"For details see https://github.com/google/sanitizers/issues/189\n", re.M)


def run(sparsim, args, work, preexec=None, timeout=TIMEOUT, stdout_to=None):
    env = dict(os.environ)
    env["TMPDIR"] = os.path.join(work, "tmp")
    sink = open(stdout_to, "wb") if stdout_to else subprocess.PIPE
    try:
        for attempt in range(20):
            try:
                p = subprocess.run([sparsim] + args, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                   stderr=subprocess.PIPE, timeout=timeout, preexec_fn=preexec or no_core)
                break
            except (PermissionError, OSError) as e:
                # the binary being linked again while the suite runs (a rebuild
                # in the same tree) cannot be executed for a moment
                if attempt == 19 or not isinstance(e, PermissionError) and e.errno != 26:  # ETXTBSY
                    raise
                time.sleep(0.5)
    finally:
        if stdout_to:
            sink.close()
    err = ASAN_STACK_NOTE.sub("", p.stderr.decode("utf-8", "replace"))
    return p.returncode, (p.stdout or b"").decode("utf-8", "replace"), err


def files_under(root):
    """Every file and link under root (folders are not outputs), relative."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def write_npy(path, spec):
    """A .npy as a case describes it: header text, float count, fill value,
    format version, bytes cut from the end or added to it."""
    header = spec["header"]
    version = spec.get("version", 1)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    fill = float("nan") if spec.get("fill") == "nan" else float(spec.get("fill", 0.5))
    data = struct.pack("<%df" % spec["floats"], *([fill] + [0.5] * (spec["floats"] - 1))) if spec["floats"] else b""
    size_field = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    blob = b"\x93NUMPY" + bytes([version, 0]) + size_field + header.encode("latin-1") + data
    blob += b"\0" * spec.get("extra", 0)
    if spec.get("cut"):
        blob = blob[:-spec["cut"]] if spec["cut"] < len(blob) else blob[:12]
    with open(path, "wb") as f:
        f.write(blob)


def mount_tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], capture_output=True)
    return r.returncode == 0


def unmount(path):
    subprocess.run(["umount", path], capture_output=True)
    if os.path.ismount(path):
        subprocess.run(["umount", "-l", path], capture_output=True)


def mem_available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024.0 / 1024.0
    return 0.0


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows


def check_line(name, code, out, err, expect_code, pattern):
    """The contract for a failure: one line on stderr, escaped, matching."""
    if code != expect_code:
        fail(name, "exit status %r, expected %d; stderr: %r" % (code, expect_code, err[-2000:]))
        return
    if expect_code == 0:
        if err:
            fail(name, "a successful run printed on stderr: %r" % err[-2000:])
        return
    if err.count("\n") != 1 or not err.endswith("\n") or not err.startswith("sparsim: "):
        fail(name, "stderr is not exactly one 'sparsim: ' line: %r" % err[-2000:])
        return
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", err[:-1]):
        fail(name, "stderr holds control characters: %r" % err)
    if pattern and not re.search(pattern, err):
        fail(name, "stderr %r does not match %r" % (err, pattern))
    if expect_code == 2 and out:
        fail(name, "bad input printed on stdout: %r" % out[-500:])


def check_leftovers(name, work, before, allowed):
    """No NAME.part anywhere, and no new file but the outputs (a name ending
    in / allows everything below that folder)."""
    after = files_under(work)
    for f in sorted(after):
        if f.endswith(".part"):
            fail(name, "%s survived" % f)
        elif f not in before and f not in allowed and not any(a.endswith("/") and f.startswith(a) for a in allowed):
            fail(name, "left %s behind" % f)


def run_case(sparsim, corpus, case, root):
    name = case["name"]
    work = tempfile.mkdtemp(prefix="case-", dir=root)
    os.makedirs(os.path.join(work, "tmp"))
    mounted = []
    try:
        needs = case.get("needs", {})
        if "mem_below_gib" in needs and mem_available_gib() >= needs["mem_below_gib"]:
            skipped.append("%s: this machine has %.0f GiB available, the case needs less than %d" %
                           (name, mem_available_gib(), needs["mem_below_gib"]))
            return
        for rel in case.get("dirs", []):
            os.makedirs(os.path.join(work, rel), exist_ok=True)
        for rel, text in case.get("files", {}).items():
            path = os.path.join(work, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(text.encode("latin-1"))
        for rel, src in case.get("copy", {}).items():
            shutil.copy(os.path.join(corpus, src), os.path.join(work, rel))
        for rel, spec in case.get("npy", {}).items():
            write_npy(os.path.join(work, rel), spec)
        for rel, target in case.get("links", {}).items():
            os.symlink(target, os.path.join(work, rel))
        for rel, kind in case.get("mounts", {}).items():
            path = os.path.join(work, rel)
            if not mount_tmpfs(path, "size=64k,ro" if kind == "ro" else "size=64k"):
                skipped.append("%s: mounting a tmpfs is not allowed here" % name)
                return
            mounted.append(path)
        for cmd in case.get("before", []):
            want = 0
            if cmd and cmd[-1].startswith("!"):
                want, cmd = int(cmd[-1][1:]), cmd[:-1]
            code, out, err = run(sparsim, expand(cmd, work, corpus), work)
            if code != want:
                fail(name, "setup %r exited %d: %s" % (cmd, code, err[-1000:]))
                return
        for rel, n in case.get("cut", {}).items():
            path = os.path.join(work, rel)
            with open(path, "rb+") as f:
                f.truncate(os.path.getsize(path) - n)
        for rel, (index, text) in case.get("edit", {}).items():
            path = os.path.join(work, rel)
            with open(path) as f:
                lines = f.readlines()
            lines[index] = text
            with open(path, "w") as f:
                f.writelines(lines)
        snapshot = {}
        for rel in case.get("unchanged", []):
            with open(os.path.join(work, rel), "rb") as f:
                snapshot[rel] = f.read()
        before = files_under(work)
        code, out, err = run(sparsim, expand(case["args"], work, corpus), work, stdout_to=case.get("stdout_to"))
        check_line(name, code, out, err, case["exit"], case.get("line"))
        if case.get("stdout") and not re.search(case["stdout"], out):
            fail(name, "stdout %r does not match %r" % (out, case["stdout"]))
        outputs = set(case.get("outputs", []))
        for rel in [o for o in outputs if not o.endswith("/")] + case.get("present", []):
            if not os.path.lexists(os.path.join(work, rel)):
                fail(name, "%s is missing" % rel)
        for rel in case.get("regular", []):
            if os.path.islink(os.path.join(work, rel)) or not os.path.isfile(os.path.join(work, rel)):
                fail(name, "%s is not a regular file" % rel)
        for rel, data in snapshot.items():
            with open(os.path.join(work, rel), "rb") as f:
                if f.read() != data:
                    fail(name, "%s was changed" % rel)
        for rel, n in case.get("rows", {}).items():
            rows = csv_rows(os.path.join(work, rel))
            if len(rows) - 1 != n or any(len(r) != len(rows[0]) for r in rows):
                fail(name, "%s holds %d rows (expected %d, each as long as the header)" % (rel, len(rows) - 1, n))
        for cmd in case.get("then", []):
            c2, o2, e2 = run(sparsim, expand(cmd, work, corpus), work)
            if c2 != 0:
                fail(name, "then %r exited %d: %s" % (cmd, c2, e2[-1000:]))
        check_leftovers(name, work, before, outputs)
    except subprocess.TimeoutExpired:
        fail(name, "did not end within %d s" % TIMEOUT)
    finally:
        for path in mounted:
            unmount(path)


# ---- endings a table cannot hold --------------------------------------------------


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def gone(pid):
    """The process has ended (a zombie waiting for a reaper counts)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def wait_for(predicate, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# several seconds, writing all along (about 150 MiB)
LONG_RUN = ["run", "--algo", "ring", "--ranks", "256", "--n", "64K", "--iters", "4", "--payload", "exact", "--out",
            "{W}/out", "--quiet"]


def children_end(name, kids):
    """Every child of a signalled parent ends within 30 s (killed if not)."""
    for k in kids:
        if not wait_for(lambda: gone(k), 30):
            os.kill(k, signal.SIGKILL)
            fail(name, "the child %d outlived its parent" % k)


def start_to_signal(sparsim, corpus, root, args, ignore_term):
    """A run in a folder of its own (its TMPDIR inside it), with the default
    signal dispositions (SIGTERM ignored if asked): (folder, process)."""
    work = tempfile.mkdtemp(prefix="sig-", dir=root)
    os.makedirs(os.path.join(work, "tmp"))
    env = dict(os.environ)
    env["TMPDIR"] = os.path.join(work, "tmp")

    def pre():
        no_core()
        for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        if ignore_term:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    p = subprocess.Popen([sparsim] + expand(args, work, corpus), cwd=work, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pre)
    return work, p


def ending(sparsim, corpus, root, name, sig, ignore_term, expect_code):
    """Starts a long run, signals its parent once the child writes, and checks
    that the child ends too and nothing is left."""
    work, p = start_to_signal(sparsim, corpus, root, LONG_RUN, ignore_term)
    part = os.path.join(work, "out", "messages.csv.part")
    if not wait_for(lambda: os.path.exists(part) or p.poll() is not None, 120):
        fail(name, "the run never started writing")
    kids = children_of(p.pid)
    if p.poll() is not None:
        fail(name, "the run ended before it could be signalled (exit %r)" % p.returncode)
        return
    os.kill(p.pid, sig)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail(name, "the parent did not end on signal %d" % sig)
    if p.returncode != expect_code:
        fail(name, "the parent ended with %r, expected %r" % (p.returncode, expect_code))
    if not kids:
        fail(name, "no child found to follow")
    children_end(name, kids)
    time.sleep(0.2)
    left = sorted(files_under(work))
    if left:
        fail(name, "left behind: %s" % ", ".join(left))


SHORT_RUN = ["run", "--algo", "topka", "--ranks", "16", "--n", "16K", "--iters", "2", "--out", "{W}/out", "--quiet"]


def ending_any_moment(sparsim, corpus, root, sig, delays):
    """SIGINT or SIGTERM at fixed delays after the start of a short run (its
    parent validating the plan, the child preparing the platform file,
    writing, publishing): whenever it lands, the run leaves no temporary
    behind (the platform file included) and ends with the signal or, when
    it was already done, with 0 and its outputs whole."""
    for delay in delays:
        name = "signal %d at %.0f ms" % (sig, delay * 1000)
        work, p = start_to_signal(sparsim, corpus, root, SHORT_RUN, False)
        time.sleep(delay)
        kids = children_of(p.pid)
        if p.poll() is None:
            os.kill(p.pid, sig)
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            fail(name, "the parent did not end")
        children_end(name, kids)
        time.sleep(0.1)
        left = sorted(f for f in files_under(work) if not f.startswith("out/") or f.endswith(".part"))
        if left:
            fail(name, "left behind: %s" % ", ".join(left))
        if p.returncode == 0:
            outs = sorted(f for f in files_under(work) if f.startswith("out/"))
            if outs != ["out/messages.csv", "out/summary.json", "out/trace.json"]:
                fail(name, "exit 0 with outputs %s" % outs)
        elif p.returncode != -sig:
            fail(name, "ended with %r, expected %r or 0" % (p.returncode, -sig))


def killed_sweep(sparsim, corpus, root, jobs=1):
    """SIGKILL of a sweep between rows: its child dies, the CSV holds only
    complete rows, no NAME.part is left.  With --jobs 2 both runs are in
    flight: every worker and run dies with the sweep."""
    name = "SIGKILL of a sweep" + (" of %d runs at once" % jobs if jobs > 1 else "")
    work = tempfile.mkdtemp(prefix="sig-", dir=root)
    os.makedirs(os.path.join(work, "tmp"))
    env = dict(os.environ)
    env["TMPDIR"] = os.path.join(work, "tmp")
    args = expand(["sweep", "--algo", "ring", "--ranks", "2,256", "--n", "64K", "--iters", "4", "--payload", "exact",
                   "--out", "{W}/s.csv", "--keep", "{W}/keep", "--jobs", str(jobs)], work, corpus)
    p = subprocess.Popen([sparsim] + args, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=no_core)
    part = os.path.join(work, "keep", "ring-P256-n65536-d0.01-1gbe", "messages.csv.part")
    if not wait_for(lambda: os.path.exists(part) or p.poll() is not None, 120) or p.poll() is not None:
        fail(name, "the second run never started writing (exit %r)" % p.poll())
        return
    kids = children_of(p.pid)
    kids += [g for k in kids for g in children_of(k)]
    p.kill()
    p.communicate()
    for k in kids:
        if not wait_for(lambda: gone(k), 30):
            os.kill(k, signal.SIGKILL)
            fail(name, "the child %d outlived the sweep" % k)
    time.sleep(0.2)
    left = files_under(work)
    for f in left:
        if f.endswith(".part"):
            fail(name, "%s survived" % f)
    rows = csv_rows(os.path.join(work, "s.csv"))
    if not (len(rows) == 2 or jobs > 1 and len(rows) == 1) or any(len(r) != len(rows[0]) for r in rows):
        fail(name, "the CSV holds %d records, expected the header and %s complete row" %
             (len(rows), "one" if jobs == 1 else "at most one"))
    if any(f.startswith("keep/ring-P256") for f in left):
        fail(name, "the killed run left outputs: %s" % sorted(left))


def fill(path):
    """Fills the file system of `path` to the last byte."""
    with open(os.path.join(path, "filler"), "wb", buffering=0) as f:
        for chunk in (65536, 4096, 1):
            while True:
                try:
                    f.write(b"\0" * chunk)
                except OSError:
                    break


def full_disk(sparsim, corpus, root):
    """A full disk: a run's outputs, a dumped result and a sweep's rows."""
    work = tempfile.mkdtemp(prefix="disk-", dir=root)
    os.makedirs(os.path.join(work, "tmp"))
    disk = os.path.join(work, "disk")
    if not mount_tmpfs(disk, "size=256k"):
        skipped.append("full disk: mounting a tmpfs is not allowed here")
        return
    try:
        # 1: the outputs do not fit: the run fails, nothing is left
        fill(disk)
        before = files_under(work)
        code, out, err = run(sparsim, expand(["RUN", "--out", "{W}/disk/out", "--quiet"], work, corpus), work)
        check_line("full disk: run outputs", code, out, err, 1, r"error writing .*: No space left on device")
        check_leftovers("full disk: run outputs", work, before, set())
        # 2: the result does not fit, the other outputs would: none is published
        code, out, err = run(sparsim, expand(["RUN", "--out", "{W}/out", "--quiet", "--dump-result",
                                              "{W}/disk/r.npy"], work, corpus), work)
        check_line("full disk: dumped result", code, out, err, 1, r"error writing .*r\.npy\.part: No space left")
        check_leftovers("full disk: dumped result", work, before, set())
        os.unlink(os.path.join(disk, "filler"))
        # 3: a sweep whose rows stop fitting: it fails, the CSV keeps complete rows
        sweep = ["sweep", "--algo", "ring", "--ranks", ",".join(str(r) for r in range(2, 34)), "--n", "1K", "--iters",
                 "1", "--out", "{W}/disk/s.csv"]
        # (its first run only, as the first of 32 shards: the same sweep, so that
        # --resume appends to its rows as they are)
        code, out, err = run(sparsim, expand(sweep + ["--shard", "1/32"], work, corpus), work)
        if code != 0:
            fail("full disk: sweep", "the first sweep failed: %s" % err)
            return
        fill(disk)
        before = files_under(work)
        code, out, err = run(sparsim, expand(sweep + ["--resume"], work, corpus), work)
        check_line("full disk: sweep", code, out, err, 1, r"cannot write .*s\.csv: No space left on device; the sweep "
                   r"stops")
        rows = csv_rows(os.path.join(disk, "s.csv"))
        if not 2 <= len(rows) < 33 or any(len(r) != len(rows[0]) for r in rows):
            fail("full disk: sweep", "the CSV holds %d records, not all complete" % len(rows))
        check_leftovers("full disk: sweep", work, before, set())
        # space again: --resume finishes it
        os.unlink(os.path.join(disk, "filler"))
        code, out, err = run(sparsim, expand(sweep + ["--resume"], work, corpus), work)
        rows = csv_rows(os.path.join(disk, "s.csv"))
        if code != 0 or len(rows) != 33 or any(len(r) != len(rows[0]) for r in rows):
            fail("full disk: sweep resumed", "exit %d, %d records: %s" % (code, len(rows), err[-500:]))
    finally:
        unmount(disk)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    sparsim = os.path.abspath(sys.argv[1])
    corpus = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "hostile"))
    only_moments = "--moments" in sys.argv[3:]
    with open(os.path.join(corpus, "cases.json")) as f:
        cases = json.load(f)["cases"]
    root = tempfile.mkdtemp(prefix="sparsim-hostile-")
    try:
        if only_moments:
            moments = [0.002 * i * i for i in range(1, 16)]  # 2 ms to 450 ms, denser near the start
            ending_any_moment(sparsim, corpus, root, signal.SIGINT, moments[0::2])
            ending_any_moment(sparsim, corpus, root, signal.SIGTERM, moments[1::2])
            return report(len(moments), "signals at chosen moments")
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda c: run_case(sparsim, corpus, c, root), cases))
        ending(sparsim, corpus, root, "SIGKILL of the parent (SIGTERM ignored)", signal.SIGKILL, True,
               -signal.SIGKILL)
        ending(sparsim, corpus, root, "SIGQUIT of the parent", signal.SIGQUIT, False, -signal.SIGQUIT)
        ending(sparsim, corpus, root, "SIGINT of the parent", signal.SIGINT, False, -signal.SIGINT)
        ending(sparsim, corpus, root, "SIGTERM of the parent", signal.SIGTERM, False, -signal.SIGTERM)
        killed_sweep(sparsim, corpus, root)
        killed_sweep(sparsim, corpus, root, jobs=2)
        full_disk(sparsim, corpus, root)
    finally:
        for dirpath, dirnames, _ in os.walk(root):
            for d in dirnames:
                if os.path.ismount(os.path.join(dirpath, d)):
                    unmount(os.path.join(dirpath, d))
        shutil.rmtree(root, ignore_errors=True)
    return report(len(cases) + 9, "%d from the corpus, 9 endings" % len(cases))


def report(total, what):
    for s in skipped:
        print("SKIP %s" % s)
    for f in failures:
        print("FAIL %s" % f)
    print("%d hostile cases (%s), %d failed, %d skipped" % (total, what, len(failures), len(skipped)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
