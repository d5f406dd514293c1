#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the whole test suite; then the tests of the C code again, built
# with AddressSanitizer and UndefinedBehaviorSanitizer.  Tests run two at a
# time (ctest -j, one job per core; mpirun's tests one after another), and
# each part says how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
start=$SECONDS
part() { # part NAME COMMAND...: runs it and says how long it took
    local name="$1" t0=$SECONDS
    shift
    "$@"
    echo "== $name: $((SECONDS - t0)) s"
}
part "install" bash scripts/install-deps.sh
part "build" bash scripts/build.sh build
part "tests" bash -c "cd build && ctest -j $jobs --output-on-failure"
echo "== again under ASan + UBSan"
# no CUDA kernels: no GPU runs them under the sanitizers, and nvcc is the
# slowest compiler of the build
part "sanitizer build" bash scripts/build.sh build-asan -DSPARSIM_SANITIZE=ON -DSPARSIM_CUDA=OFF
part "sanitizer tests" bash -c "cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    ctest -j $jobs --output-on-failure"
echo "== all: $((SECONDS - start)) s"
