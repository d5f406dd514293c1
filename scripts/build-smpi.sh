#!/usr/bin/env bash
# Builds sparsim-smpi: the MPI backend compiled with SimGrid's smpicc, to run
# under smpirun on a simulated platform (a third path that cross-checks the
# shim's own SimGrid backend).  Usage: scripts/build-smpi.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build}"
mkdir -p "$out/smpi"
srcs=(algorithms/*.c traces/*.c analysis/bounds.c topologies/*.c
      sim/shim.c sim/plan.c sim/run.c sim/summary.c sim/npy.c sim/workload.c
      sim/backend_mpi.c sim/main_mpi.c)
objs=()
for s in "${srcs[@]}"; do
    o="$out/smpi/$(echo "$s" | tr / _).o"
    if [ ! -e "$o" ] || [ "$s" -nt "$o" ]; then
        smpicc -std=gnu11 -O2 -w -DSPARSIM_SMPI -c "$s" -o "$o"
    fi
    objs+=("$o")
done
smpicc "${objs[@]}" -o "$out/sparsim-smpi" -lcjson -lgsl -lgslcblas -lm
echo "$out/sparsim-smpi"
