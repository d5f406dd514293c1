#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the main job: every algorithm at P = 64 on the built-in 1 GbE
# platform over 4 iterations (Ok-Topk reuses thresholds after the first; the
# table shows the largest iteration and the steady state of the later ones),
# printed as a comparison table (outputs in sparsim-out/), then a
# small sweep of P = 8..64 drawn as scaling plots (sparsim-out/*.png).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
./build/sparsim run --iters 4 --out sparsim-out "$@"
rm -f sparsim-out/sweep.csv
./build/sparsim sweep --ranks 8,16,32,64 --n 262144 --out sparsim-out/sweep.csv
/usr/bin/python3 notebooks/plot_scaling.py sparsim-out/sweep.csv --out sparsim-out
