#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the main job: every algorithm at P = 64 on the built-in 1 GbE
# platform, printed as a comparison table, outputs in sparsim-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
./build/sparsim run --out sparsim-out "$@"
