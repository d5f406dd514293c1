#!/usr/bin/env bash
# Builds sparsim-smpi: the MPI backend compiled with SimGrid's smpicc, to run
# under smpirun on a simulated platform (a third path that cross-checks the
# shim's own SimGrid backend).  Usage: scripts/build-smpi.sh [BUILD_DIR]
# SMPI_OPT sets the optimisation (default -O2; -O0 compiles in 60% of the
# time, for checks that do not time the host's computation, as the tests')
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build}"
opt="${SMPI_OPT:--O2}"
case "$opt" in -O0 | -O1 | -O2 | -O3) ;; *) echo "build-smpi.sh: SMPI_OPT must be -O0 to -O3, not '$opt'" >&2; exit 2 ;; esac
mkdir -p "$out/smpi$opt"
srcs=(algorithms/*.c traces/*.c analysis/bounds.c analysis/nccl_model.c analysis/workload_stats.c topologies/*.c
      sim/shim/*.c sim/backends/mpi/*.c sim/driver/*.c sim/workload/*.c
      sim/commands/main_mpi.c sim/commands/calibrate.c sim/commands/summary_print.c)
# the one version string, as CMakeLists.txt's project() declares it
version=$(sed -n 's/^project(sparsim VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
objs=()
stale=()
for s in "${srcs[@]}"; do
    o="$out/smpi$opt/$(echo "$s" | tr / _).o"
    if [ ! -e "$o" ] || [ "$s" -nt "$o" ]; then
        stale+=("$s")
    fi
    objs+=("$o")
done
# the stale ones compiled on every core at once
export out version opt
[ ${#stale[@]} -eq 0 ] || printf '%s\0' "${stale[@]}" | xargs -0 -r -P "$(nproc)" -I{} bash -c \
    'smpicc -std=gnu11 "$opt" -w -I. -DSPARSIM_SMPI -DSPARSIM_VERSION="\"$version\"" -c "$1" \
         -o "$out/smpi$opt/$(echo "$1" | tr / _).o"' _ {}
smpicc "${objs[@]}" -o "$out/sparsim-smpi" -lcjson -lgsl -lgslcblas -lm
echo "$out/sparsim-smpi"
