#!/usr/bin/env bash
# bench/gpu.sh - everything that needs an NVIDIA GPU, as one command:
#   1. builds sparsim with the CUDA kernels into DIR (default build-gpu),
#   2. runs the CUDA tests (the kernels against the CPU's bit for bit over
#      n = 1 .. 2^27; sparsim-mpi --select cuda against the CPU run) and the
#      tests of the pieces they stand on; a CUDA test that skips is a failure
#      here, since this script is run where there is a GPU,
#   3. runs the benchmark (bench/gpu_bench.cu): n = 2^20, 2^24, 2^27 at
#      density 0.001, 0.01, 0.1, and writes its markdown table to OUT
#      (default bench/gpu-results.md) with the GPU, the date and the command.
# It needs what the whole build needs (scripts/install-deps.sh) and nvcc. Not yet
# run as one command; its kernel test and benchmark took about 50 s on one H200
# (bench/README.md section 2 has the numbers and how they were run without the
# rest of the build); the whole script should take 3 to 5 minutes (estimate).
# usage: bash bench/gpu.sh [DIR] [OUT]
set -uo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-gpu}"
out="${2:-bench/gpu-results.md}"
jobs="$(nproc)"
t0=$(date +%s)
step() { printf '\n== %s (%d s)\n' "$1" $(( $(date +%s) - t0 )) >&2; }

mkdir -p "$dir"
log="$(cd "$dir" && pwd)"
step "build (logs in $log)"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log/gpu-configure.log" 2>&1 || {
    cat "$log/gpu-configure.log" >&2; echo "gpu.sh: configure failed" >&2; exit 1; }
grep -q "CUDA selection kernels for" "$log/gpu-configure.log" || {
    echo "gpu.sh: cmake found no nvcc: the build has no CUDA kernels" >&2; exit 1; }
cmake --build "$dir" -j "$jobs" >"$log/gpu-build.log" 2>&1 && cmake --build "$dir" -j "$jobs" --target gpu_bench \
    >>"$log/gpu-build.log" 2>&1 || { tail -40 "$log/gpu-build.log" >&2; echo "gpu.sh: build failed" >&2; exit 1; }

step "tests"
tests_rc=0
(cd "$dir" && ctest -j 4 -R '^(test_cuda|test_cuda_mpi|test_units|test_devices)$' --output-on-failure \
    >"$log/gpu-ctest.log" 2>&1) || tests_rc=1
grep -E "Test +#|tests passed|SKIPPED|FAIL" "$log/gpu-ctest.log" >&2
if grep -q "Skipped" "$log/gpu-ctest.log"; then
    echo "gpu.sh: a CUDA test skipped on a machine meant to have a GPU (the reason is above)" >&2
    tests_rc=1
fi

step "benchmark"
{
    echo "# GPU selection benchmark"
    echo
    echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: bash bench/gpu.sh; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "CPU kernels on: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') (one core)"
    echo "Tests: $([ $tests_rc = 0 ] && echo passed || echo 'FAILED (see the ctest log)')"
    echo
    "$dir/gpu_bench"
} >"$out.part"
bench_rc=$?
mv "$out.part" "$out"
cat "$out"
step "done"
[ $tests_rc = 0 ] && [ $bench_rc = 0 ]
