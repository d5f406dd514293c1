#!/usr/bin/env bash
# Builds the fuzzing harnesses (libFuzzer, with AddressSanitizer and
# UndefinedBehaviorSanitizer) into build-fuzz/ at the top of the tree, or the
# folder in $1.
# FUZZ_OPT sets the optimisation (default -O1, for long runs; the test
# suite's 5-second smoke run takes -O0: half the compile time, 55-80% of
# the inputs a second).
# Needs clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev);
# exits 77 when they are missing, so that callers can report a skip.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
out="${1:-$root/build-fuzz}"
opt="${FUZZ_OPT:--O1}"
case "$opt" in -O0 | -O1 | -O2) ;; *) echo "fuzz/build.sh: FUZZ_OPT must be -O0, -O1 or -O2, not '$opt'" >&2; exit 2 ;; esac
cc="${CC_FUZZ:-clang}"
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz/build.sh: no $cc: install clang and libclang-rt-14-dev to fuzz" >&2
    exit 77
fi
mkdir -p "$out/obj$opt"
# does this compiler link libFuzzer?
probe="$out/obj$opt/probe"
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    >"$probe.c"
if ! "$cc" -fsanitize=fuzzer "$probe.c" -o "$probe" 2>/dev/null; then
    echo "fuzz/build.sh: $cc cannot link libFuzzer (-fsanitize=fuzzer): install libclang-rt-14-dev to fuzz" >&2
    exit 77
fi
version=$(sed -n 's/^project(sparsim VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
flags=(-std=gnu11 -g1 "$opt" -fno-omit-frame-pointer -fsanitize=address,undefined
       -DSPARSIM_VERSION="\"$version\"" -I"$root" -I/usr/include/cjson -Werror=implicit-function-declaration -Werror=int-conversion)
# (undefined behaviour is recoverable at build time so that a run can
# suppress a known case, regressions/open/ubsan.supp; the runners set
# halt_on_error=1, so that any other one ends the run as a crash)
# every source that needs neither SimGrid nor MPI (the backends, under
# sim/backends/, are not listed: a stub stands in); the commands' own files
# that hold a reader are included by their harness (to reach its static
# functions), those with main() are left out
cd "$root"
srcs=()
for s in algorithms/*.c traces/*.c analysis/*.c topologies/*.c sim/shim/*.c sim/driver/*.c sim/workload/*.c \
         sim/commands/*.c; do
    case "$s" in
    sim/commands/main.c | sim/commands/main_mpi.c | sim/commands/calibrate.c) ;; # main(), MPI
    sim/commands/sweep.c) ;;                                            # included by its harness
    *) srcs+=("$s") ;;
    esac
done
objs=()
stale=()
for s in "${srcs[@]}"; do
    o="$out/obj$opt/$(echo "$s" | tr / _).o"
    if [ ! -e "$o" ] || [ "$s" -nt "$o" ] || [ "$here/build.sh" -nt "$o" ]; then
        stale+=("$s")
    fi
    objs+=("$o")
done
# the stale ones, on every core
export cc out opt
[ ${#stale[@]} -eq 0 ] || printf '%s\0' "${stale[@]}" | xargs -0 -r -P "$(nproc)" -I{} bash -c \
    'o="$out/obj$opt/$(echo "$1" | tr / _).o"; "$cc" "${@:2}" -fsanitize=fuzzer-no-link -c "$1" -o "$o"' _ {} "${flags[@]}"
for h in "$here"/fuzz_*.c; do
    name=$(basename "$h" .c)
    "$cc" "${flags[@]}" -fsanitize=fuzzer -I"$root" "$h" "$here/stub_backend.c" "${objs[@]}" \
        -o "$out/$name" -lcjson -lgsl -lgslcblas -lm -lpthread
done
echo "$out"
