#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the whole test suite; then the tests of the C code again, built
# with AddressSanitizer and UndefinedBehaviorSanitizer.  Tests run one per
# core at a time (ctest -j; mpirun's tests one after another); the sanitizer
# build compiles while the plain tests run (they wait on processes and
# timers as much as they compute).  Each part says how long it took.
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

# no CUDA kernels under the sanitizers: no GPU runs them there, and nvcc is
# the slowest compiler of the build
mkdir -p build-asan
asan_start=$SECONDS
bash scripts/build.sh build-asan -DSPARSIM_SANITIZE=ON -DSPARSIM_CUDA=OFF >build-asan/build.log 2>&1 &
asan_pid=$!
trap 'kill $asan_pid 2>/dev/null || true' EXIT
plain=0
part "tests" bash -c "cd build && ctest -j $jobs --output-on-failure" || plain=$?
asan=0
wait $asan_pid || asan=$?
trap - EXIT
echo "== sanitizer build (beside the tests): $((SECONDS - asan_start)) s"
if [ $asan -ne 0 ]; then
    tail -n 40 build-asan/build.log
    echo "test.sh: the sanitizer build failed (build-asan/build.log)" >&2
    exit 1
fi
[ $plain -eq 0 ] || exit $plain

echo "== again under ASan + UBSan"
part "sanitizer tests" bash -c "cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    ctest -j $jobs --output-on-failure"
echo "== all: $((SECONDS - start)) s"
