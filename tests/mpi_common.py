"""What the real-MPI tests share (test_mpi, test_mpi_failures, test_cuda_mpi):
the environment mpirun needs on a build machine, the running count of checks,
and running a command or an MPI job."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# Each test's jobs keep their shared-memory segments in a folder of the test's own
# (Open MPI's default is /dev/shm, shared by every job of the machine): a test that
# removes what an aborted job left (test_mpi_failures) then touches no other test's
# job, so the MPI tests run beside one another
SHM_DIR = tempfile.mkdtemp(prefix="sparsim-mpi-shm-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, SHM_DIR, True)
# root may run mpirun here, more ranks than cores, Debian's python first; a rank
# waiting for a message yields its core (Open MPI polls: without this a waiting
# rank keeps a core busy, which the tests beside it, and the ranks of its own
# job, then wait for); under a sanitizer build the MPI library's own leaks are
# not ours
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1",
           PATH="/usr/bin:" + os.environ.get("PATH", ""),
           ASAN_OPTIONS="detect_leaks=0", OMPI_MCA_btl_vader_backing_directory=SHM_DIR)
# the launcher: Open MPI's mpirun, or the one the environment names (a bundle
# of it, bench/device/)
MPIRUN = os.environ.get("SPARSIM_MPIRUN", "mpirun")
ALGOS = ["ring", "recdoubling", "rabenseifner", "topka", "gtopk", "gaussiank", "topkdsa", "oktopk", "onebit", "qgz",
         "powersgd", "zen", "spardl"]
failures = []
_checks = [0]


def check(cond, what):
    """counts a check; a failed one is kept and said on stderr; returns cond"""
    _checks[0] += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def checks():
    return _checks[0]


def run(cmd, timeout=120):
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)


def mpirun(binary, P, args, timeout=120):
    return run([MPIRUN, "--quiet", "--oversubscribe", "-np", str(P), binary] + args, timeout)


def write_npy(path, a):
    np.save(path, a.astype(np.float32))
