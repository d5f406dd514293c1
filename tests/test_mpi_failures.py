#!/usr/bin/python3
"""sparsim-mpi never hangs: every failure ends the whole job with one line (run by ctest).

Each case runs a real job under mpirun --oversubscribe (4 processes) and hurts it in one
way: bad input that only one rank sees, a file only one rank cannot read, a non-finite
value in a gradient file, a failure in the middle of an iteration, rank 0 unable to write
its outputs, ranks given different iteration counts, a rank stopped with SIGSTOP (mid-run,
while settling, inside MPI_Init), a rank killed with SIGKILL.
Every case must end the job in time, with the exit status of the contract, exactly one
line on stderr that names the rank and what happened, no complete-looking outputs, and
no process of the job left behind.

usage: test_mpi_failures.py SPARSIM_MPI
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

SPARSIM_MPI = os.path.abspath(sys.argv[1])
from mpi_common import ENV, SHM_DIR, check, checks, failures  # noqa: E402


def mapped_segments():
    found = set()
    for m in os.listdir("/proc"):
        if m.isdigit():
            try:
                found.update(l.split()[-1] for l in open("/proc/%s/maps" % m) if "vader_segment" in l)
            except (OSError, IndexError):
                pass
    return found


class Job:
    """One mpirun in a session of its own, so that nothing of it can outlive the test.  An
    aborted job leaves Open MPI's shared-memory segments behind (in this test's own SHM_DIR):
    those it made, now used by no process, are removed after it."""

    def __init__(self, *apps):
        self.segments = set(glob.glob(os.path.join(SHM_DIR, "vader_segment.*")))
        cmd = ["mpirun", "--quiet", "--oversubscribe"]
        for i, (np_, args) in enumerate(apps):
            cmd += ([":"] if i else []) + ["-np", str(np_), SPARSIM_MPI] + args
        self.t0 = time.time()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                                  start_new_session=True)

    def processes(self):
        """{rank: pid} of this job's sparsim-mpi processes"""
        found = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = open("/proc/%s/stat" % pid).read()
                if int(stat.rsplit(")", 1)[1].split()[3]) != self.p.pid:  # the session
                    continue
                if not open("/proc/%s/cmdline" % pid, "rb").read().startswith(SPARSIM_MPI.encode()):
                    continue
                for e in open("/proc/%s/environ" % pid, "rb").read().split(b"\0"):
                    if e.startswith(b"OMPI_COMM_WORLD_RANK="):
                        found[int(e.split(b"=")[1])] = int(pid)
            except (OSError, ValueError, IndexError):
                pass
        return found

    def wait_ranks(self, n, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            r = self.processes()
            if len(r) == n:
                return r
            time.sleep(0.01)
        return self.processes()

    def wait_talking(self, ranks, timeout=30):
        """waits until every rank has mapped a peer's shared-memory segment: MPI_Init is
        behind them all and they exchange messages (a fixed sleep was not enough on a
        busy machine, where MPI_Init alone can outlast it)"""
        end = time.time() + timeout
        while time.time() < end:
            try:
                if all(len({l.split()[-1] for l in open("/proc/%d/maps" % pid) if "vader_segment" in l}) >= 2
                       for pid in ranks.values()):
                    return True
            except OSError:
                return False
            time.sleep(0.05)
        return False

    def finish(self, timeout):
        """(exit status or None if it hung, stdout, stderr, seconds); the job is gone afterwards"""
        try:
            out, err = self.p.communicate(timeout=timeout)
            rc = self.p.returncode
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            out, err = self.p.communicate()
        took = time.time() - self.t0
        # a rank may still be on its way out when mpirun returns (a sanitized one checks its
        # memory at exit): left behind is one still there 3 s later
        end = time.time() + 3
        left = self.processes()
        while left and time.time() < end:
            time.sleep(0.1)
            left = self.processes()
        for pid in left.values():
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.1 if left else 0)
        new = set(glob.glob(os.path.join(SHM_DIR, "vader_segment.*"))) - self.segments
        for seg in new - mapped_segments():
            os.remove(seg)
        return rc, out, err, took, left


def lines(err):
    return [l for l in err.splitlines() if l.strip()]


def ours(err):
    """stderr without the lines Open MPI writes itself when a job's processes die or stop under it
    ("[host:pid] Read -1, ..." from its shared-memory transport, "[warn] Epoll MOD ..." from its
    event library as mpirun tears the job down, seen on a busy machine): sparsim's own must still
    be exactly one line"""
    return "\n".join(l for l in lines(err) if not l.startswith("["))


def one_line(name, err, *words):
    """exactly one line on stderr, holding every word"""
    ls = lines(err)
    ok = check(len(ls) == 1, "%s: expected one line on stderr, got %r" % (name, err))
    for w in words:
        ok = check(any(w in l for l in ls), "%s: the line should say %r: %r" % (name, w, err)) and ok
    return ok


def no_outputs(name, out):
    if os.path.isdir(out):
        left = [f for f in os.listdir(out) if f in ("summary.json", "messages.csv", "trace.json") or
                f.endswith(".part")]
        check(not left, "%s: left %s behind" % (name, left))


def run_args(out, watchdog, *more):
    return ["run", "--algo", "ring", "--ranks", "4", "--out", out, "--watchdog", str(watchdog), "--quiet"] + list(more)


tmp = tempfile.mkdtemp(prefix="sparsim-mpi-failures-")
try:
    # --- failures every rank learns at one point: one line from rank 0, at once (the watchdog is long) ---
    W = 60

    # rank 0 alone cannot create its output folder (the others start the run)
    out = os.path.join(tmp, "nope")
    j = Job((4, run_args("/proc/nope/out", W, "--n", "1000")))
    rc, _, err, took, left = j.finish(45)
    check(rc == 2, "bad --out on rank 0: exit status %r, expected 2" % rc)
    one_line("bad --out on rank 0", err, "rank 0", "/proc/nope")
    check(took < 30, "bad --out on rank 0: took %.1f s" % took)
    check(not left, "bad --out on rank 0: processes left %s" % left)

    # one rank alone is given a bad value
    out = os.path.join(tmp, "badvalue")
    j = Job((3, run_args(out, W, "--n", "1000")), (1, run_args(out, W, "--n", "0")))
    rc, _, err, took, left = j.finish(45)
    check(rc == 2, "bad value on rank 3: exit status %r, expected 2" % rc)
    one_line("bad value on rank 3", err, "rank 3", "--n")
    check(took < 30 and not left, "bad value on rank 3: took %.1f s, left %s" % (took, left))
    no_outputs("bad value on rank 3", out)

    # one rank alone cannot read its gradient file (found when the run starts)
    g = np.random.default_rng(3).standard_normal((3, 4, 1000)).astype(np.float32)
    gf = os.path.join(tmp, "g.npy")
    np.save(gf, g)
    out = os.path.join(tmp, "nofile")
    missing = os.path.join(tmp, "missing.npy")
    j = Job((1, run_args(out, W, "--grad-file", gf)), (1, run_args(out, W, "--grad-file", missing)),
            (2, run_args(out, W, "--grad-file", gf)))
    rc, _, err, took, left = j.finish(45)
    check(rc == 2, "unreadable file on rank 1: exit status %r, expected 2" % rc)
    one_line("unreadable file on rank 1", err, "rank 1", "missing.npy")
    check(took < 30 and not left, "unreadable file on rank 1: took %.1f s, left %s" % (took, left))
    no_outputs("unreadable file on rank 1", out)

    # a non-finite value of rank 2 in iteration 1: bad input, found by every rank before the run
    bad = g.copy()
    bad[1, 2, 17] = np.nan
    bf = os.path.join(tmp, "nan.npy")
    np.save(bf, bad)
    out = os.path.join(tmp, "nan")
    j = Job((4, run_args(out, W, "--grad-file", bf)))
    rc, _, err, took, left = j.finish(45)
    check(rc == 2, "NaN on rank 2: exit status %r, expected 2" % rc)
    one_line("NaN on rank 2", err, "rank 2", "iteration 1", "non-finite")
    check(took < 30 and not left, "NaN on rank 2: took %.1f s, left %s" % (took, left))
    no_outputs("NaN on rank 2", out)

    # a failure in the middle of an iteration (a message larger than MPI's int count), on both ranks at
    # once: the job ends at once, with one line
    out = os.path.join(tmp, "huge")
    j = Job((2, ["run", "--algo", "ring", "--ranks", "2", "--n", "1200000000", "--payload", "size", "--out", out,
                 "--watchdog", str(W), "--quiet"]))
    rc, _, err, took, left = j.finish(45)
    check(rc == 1, "a message too large: exit status %r, expected 1" % rc)
    one_line("a message too large", err, "rank ", "int count")
    check(took < 30 and not left, "a message too large: took %.1f s, left %s" % (took, left))
    no_outputs("a message too large", out)

    # rank 0 cannot write its outputs, the first of two algorithms' (the others wait for it)
    out = os.path.join(tmp, "nodump")
    j = Job((4, ["run", "--algo", "ring,recdoubling", "--ranks", "4", "--n", "1000", "--out", out, "--watchdog",
                 str(W), "--quiet", "--dump-result", "/proc/nope.npy"]))
    rc, _, err, took, left = j.finish(45)
    check(rc == 1, "rank 0's outputs: exit status %r, expected 1" % rc)
    one_line("rank 0's outputs", err, "rank 0", "/proc/nope.ring.npy")  # the first algorithm's own file
    check(took < 30 and not left, "rank 0's outputs: took %.1f s, left %s" % (took, left))

    # calibrate: rank 1 alone is given a bad value
    out = os.path.join(tmp, "cal")
    j = Job((1, ["calibrate", "--out", out]), (1, ["calibrate", "--out", out, "--hosts", "1"]))
    rc, _, err, took, left = j.finish(45)
    check(rc == 2, "calibrate, bad value on rank 1: exit status %r, expected 2" % rc)
    one_line("calibrate, bad value on rank 1", err, "rank 1", "--hosts")
    check(took < 30 and not left, "calibrate, bad value on rank 1: took %.1f s, left %s" % (took, left))

    # --- a rank stopped, killed or out of step: the others end the job within the watchdog period ---
    W = 5
    # after the watchdog, the job's teardown: about a second on a quiet machine, and
    # up to 8.4 s measured for four sanitized ranks beside two spinning processes
    END = 10

    # rank 3 runs one iteration, the others three: they wait for its messages that never come
    name = "rank 3 out of step"
    out = os.path.join(tmp, "steps")
    j = Job((3, run_args(out, W, "--n", "100000", "--iters", "3")), (1, run_args(out, W, "--n", "100000", "--iters",
                                                                                   "1")))
    rc, _, err, took, left = j.finish(W + 30)
    check(rc == 1, "%s: exit status %r, expected 1" % (name, rc))
    # which rank tells depends on timing (each waits for the next): the line names it and its peer
    one_line(name, ours(err), "without progress", "waited", "rank")
    check(took < W + 5 and not left, "%s: took %.1f s, left %s" % (name, took, left))
    no_outputs(name, out)
    long_run = ["--n", "1000000", "--iters", "100000", "--payload", "exact", "--no-csv", "--no-trace"]
    for victim in (2, 0):
        name = "SIGSTOP on rank %d mid-run" % victim
        out = os.path.join(tmp, "stop%d" % victim)
        j = Job((4, run_args(out, W, *long_run)))
        ranks = j.wait_ranks(4)
        check(j.wait_talking(ranks), "%s: the ranks exchange messages" % name)
        time.sleep(1)  # into the iterations
        t_stop = time.time()
        if check(victim in ranks, "%s: ranks not found (%s)" % (name, ranks)):
            os.kill(ranks[victim], signal.SIGSTOP)
        rc, _, err, took, left = j.finish(W + 30)
        ended = time.time() - t_stop
        check(rc == 1, "%s: exit status %r, expected 1" % (name, rc))
        one_line(name, ours(err), "rank %d is stopped" % victim, "--watchdog 5")
        check(ended < W + END, "%s: the job ended %.1f s after the stop (watchdog %d s)" % (name, ended, W))
        check(not left, "%s: processes left %s" % (name, left))
        no_outputs(name, out)

    # while settling, between iterations the ranks only meet in the synchronisation
    name = "SIGSTOP on rank 1 while settling"
    out = os.path.join(tmp, "settle")
    j = Job((4, ["run", "--algo", "topka", "--ranks", "4", "--n", "200000", "--settle", "100000", "--out", out,
                 "--watchdog", str(W), "--quiet", "--payload", "exact"]))
    ranks = j.wait_ranks(4)
    check(j.wait_talking(ranks), "%s: the ranks exchange messages" % name)
    time.sleep(1)  # into the settling
    t_stop = time.time()
    if check(1 in ranks, "%s: ranks not found (%s)" % (name, ranks)):
        os.kill(ranks[1], signal.SIGSTOP)
    rc, _, err, took, left = j.finish(W + 30)
    ended = time.time() - t_stop
    check(rc == 1, "%s: exit status %r, expected 1" % (name, rc))
    one_line(name, ours(err), "rank 1 is stopped", "synchronisation between iterations")
    check(ended < W + END and not left, "%s: ended %.1f s after the stop, left %s" % (name, ended, left))

    # inside MPI_Init (before the ranks know each other): the job still ends, with one line
    name = "SIGSTOP on rank 1 at its start"
    j = Job((4, run_args(os.path.join(tmp, "init"), W, "--n", "1000", "--iters", "3")))
    ranks = {}
    end = time.time() + 10
    while 1 not in ranks and time.time() < end:
        ranks = j.processes()
    t_stop = time.time()
    if check(1 in ranks, "%s: rank 1 not found" % name):
        os.kill(ranks[1], signal.SIGSTOP)
    rc, _, err, took, left = j.finish(W + 30)
    ended = time.time() - t_stop
    check(rc is not None and rc != 0, "%s: exit status %r" % (name, rc))
    one_line(name, ours(err), "without progress")
    check(ended < W + 5 and not left, "%s: ended %.1f s after the stop, left %s" % (name, ended, left))

    for victim in (1, 0):
        name = "SIGKILL on rank %d mid-run" % victim
        out = os.path.join(tmp, "kill%d" % victim)
        j = Job((4, run_args(out, W, *long_run)))
        ranks = j.wait_ranks(4)
        check(j.wait_talking(ranks), "%s: the ranks exchange messages" % name)
        time.sleep(1)  # into the iterations
        t_kill = time.time()
        if check(victim in ranks, "%s: ranks not found (%s)" % (name, ranks)):
            os.kill(ranks[victim], signal.SIGKILL)
        rc, _, err, took, left = j.finish(W + 30)
        ended = time.time() - t_kill
        check(rc is not None and rc != 0, "%s: exit status %r" % (name, rc))
        one_line(name, ours(err), "rank %d died" % victim, "killed")
        check(ended < W and not left, "%s: ended %.1f s after the kill, left %s" % (name, ended, left))
        no_outputs(name, out)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d passed, %d failed" % (checks() - len(failures), len(failures)))
sys.exit(1 if failures else 0)
