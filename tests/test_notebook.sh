#!/usr/bin/env bash
# The notebook, executed headless on a small sweep, writes its four figures;
# the same plotting code runs as a script.  Run by ctest with the sparsim
# binary as $1.  Debian's python (/usr/bin/python3) has matplotlib, pandas
# and Jupyter; another python3 earlier on PATH may not.
set -euo pipefail
sparsim="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export PATH="/usr/bin:$PATH"

"$sparsim" sweep --ranks 4,8 --algo ring,topka,oktopk --n 4096 --out "$tmp/sweep.csv" >/dev/null
test "$(wc -l < "$tmp/sweep.csv")" -eq 7 || { echo "sweep CSV should have 6 rows"; exit 1; }

SPARSIM_SWEEP_CSV="$tmp/sweep.csv" SPARSIM_FIGURES="$tmp/figs" \
    jupyter nbconvert --to notebook --execute "$here/notebooks/scaling.ipynb" \
    --output-dir "$tmp" --output executed.ipynb >/dev/null 2>"$tmp/nbconvert.log" \
    || { cat "$tmp/nbconvert.log"; exit 1; }
for f in volume time phases crossover; do
    png="$tmp/figs/$f-1gbe-n4096-d0.01.png"
    test -s "$png" || { echo "missing $png"; exit 1; }
    head -c 8 "$png" | od -An -c | grep -q "P   N   G" || { echo "$png is not a PNG"; exit 1; }
done
images=$(grep -c '"image/png"' "$tmp/executed.ipynb")
test "$images" -eq 4 || { echo "executed notebook shows $images images, expected 4"; exit 1; }

/usr/bin/python3 "$here/notebooks/plot_scaling.py" "$tmp/sweep.csv" --out "$tmp/script" >/dev/null
test "$(ls "$tmp/script"/*.png | wc -l)" -eq 4 || { echo "the script wrote no 4 figures"; exit 1; }
echo "notebook: 4 figures, 4 images; script: 4 figures"

# Ok-Topk's steady state from a 2-iteration sweep row equals the formula on
# the iterations' own times (summary.json of the same run): tau' = 8 here
"$sparsim" sweep --ranks 8 --algo oktopk --n 65536 --iters 2 --tau-prime 8 --device p100 --out "$tmp/ok.csv" >/dev/null
"$sparsim" run --ranks 8 --algo oktopk --n 65536 --iters 2 --tau-prime 8 --device p100 --out "$tmp/okrun" --quiet
/usr/bin/python3 - "$here/notebooks" "$tmp/ok.csv" "$tmp/okrun/summary.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import plot_scaling as ps
df = ps.oktopk_steady(ps.load(sys.argv[2]))
got = float(df[df.algo == "oktopk"].time_per_iter_mean_s.iloc[0])
its = [i["time_s"] for i in json.load(open(sys.argv[3]))["iterations"]]
want = (its[0] + 7 * its[1]) / 8
assert its[0] > its[1], "iteration 0 (exact recompute) should be the slower: %s" % its
assert abs(got - want) <= 1e-6 * want, "steady state %g, from the iterations %g" % (got, want)
print("oktopk steady state: %.6g s (iterations %s)" % (got, its))
PY
