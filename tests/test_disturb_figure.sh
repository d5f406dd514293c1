#!/usr/bin/env bash
# A sweep over a disturbance's levels (sparsim sweep --disturb) draws one
# figure of slowdown against level per (platform, n, density, P), with one
# line per algorithm; the zero level measures no slowdown and noise (which
# stretches the base compute of --compute) slows every algorithm more as it
# grows.  Run by ctest with the sparsim binary as $1.
set -euo pipefail
sparsim="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export PATH="/usr/bin:$PATH"

"$sparsim" sweep --ranks 4 --algo ring,topka --n 4096 --iters 1 --compute 2e-3 --noise-length 2e-5 \
    --disturb noise=0,0.05,0.2 --out "$tmp/sweep.csv" >/dev/null
test "$(wc -l < "$tmp/sweep.csv")" -eq 7 || { echo "sweep CSV should have 6 rows"; exit 1; }
/usr/bin/python3 - "$tmp/sweep.csv" <<'PY'
import sys
import pandas as pd
df = pd.read_csv(sys.argv[1])
assert (df.disturbance == "noise").all(), df.disturbance
for algo, g in df.groupby("algo"):
    g = g.sort_values("level")
    assert pd.isna(g.slowdown.iloc[0]), "the zero level measured a slowdown"
    assert (g.slowdown.iloc[1:] > 1).all(), (algo, list(g.slowdown))
    assert g.slowdown.iloc[2] > g.slowdown.iloc[1], (algo, list(g.slowdown))
PY
/usr/bin/python3 "$here/notebooks/plot_scaling.py" "$tmp/sweep.csv" --out "$tmp/figs" >/dev/null
png="$tmp/figs/disturb-1gbe-n4096-d0.01-P4-noise.png"
test -s "$png" || { echo "missing $png"; ls "$tmp/figs"; exit 1; }
head -c 8 "$png" | od -An -c | grep -q "P   N   G" || { echo "$png is not a PNG"; exit 1; }
test "$(ls "$tmp/figs"/*.png | wc -l)" -eq 5 || { echo "expected the 4 scaling figures and 1 disturbance figure"; exit 1; }
echo "disturbance sweep: 6 rows, slowdowns grow with noise; 5 figures"
