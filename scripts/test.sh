#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the whole test suite, every test once: the tests of the C code
# (and the MPI backend's failures, the hostile inputs, the recorded message
# lists) in a build with AddressSanitizer and UndefinedBehaviorSanitizer, the
# rest (Python, MPI with SMPI, the model's statistics, the fuzzers, the
# notebook) in the plain build.  Each build runs one test more than it has
# cores at a time (ctest -j: tests wait on processes and timers part of the
# time, and on a machine busy with other work more of them hold more of its
# cores); the sanitizer build compiles, and then its tests run, while the
# plain tests run (they wait on processes and timers as much as they
# compute).  Each part says how long it took.  `ctest` in build/ alone runs
# every test of the plain build.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
start=$SECONDS
part() { # part NAME COMMAND...: runs it, says how long it took, returns its status
    local name="$1" t0=$SECONDS rc=0
    shift
    "$@" || rc=$?
    echo "== $name: $((SECONDS - t0)) s"
    return $rc
}
part "install" bash scripts/install-deps.sh
part "build" bash scripts/build.sh build

# The sanitizer build, then its tests, beside the plain tests (their output
# goes to build-asan/*.log and is shown when both are done): no CUDA kernels
# under the sanitizers, as no GPU runs them there, and nvcc is the slowest
# compiler of the build
mkdir -p build-asan
asan_start=$SECONDS
setsid bash -c 'bash scripts/build.sh build-asan -DSPARSIM_SANITIZE=ON -DSPARSIM_CUDA=OFF >build-asan/build.log 2>&1 \
    || exit 3; echo "== sanitizer build: $((SECONDS)) s" >build-asan/test.log
    cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
        ctest -j "$1" --output-on-failure >>test.log 2>&1' _ "$((jobs + 1))" &
asan_pid=$!
trap 'kill -- -$asan_pid 2>/dev/null || true' EXIT
plain=0
part "tests" bash -c "cd build && ctest -j $((jobs + 1)) -LE sanitized --output-on-failure" || plain=$?
asan=0
wait $asan_pid || asan=$?
trap - EXIT
if [ $asan -eq 3 ]; then
    tail -n 40 build-asan/build.log
    echo "test.sh: the sanitizer build failed (build-asan/build.log)" >&2
    exit 1
fi
echo "== under ASan + UBSan (beside the plain tests)"
cat build-asan/test.log
echo "== sanitizer build and tests: $((SECONDS - asan_start)) s"
echo "== all: $((SECONDS - start)) s"
[ $plain -eq 0 ] || exit $plain
exit $asan
