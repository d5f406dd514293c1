#!/usr/bin/env bash
# Tests of the gradient trace recorder (traces/record_gradients.py): every model
# at its tiny size writes a grads.npy that numpy loads with the announced shape and
# a layer table that covers it; the same seed gives the same trace; bad input exits
# 2 with one line on stderr; a stopped run leaves no files behind.
# With the simulator given, every trace also runs through it: an exact Ok-Topk
# run on the recorded gradients, and their statistics.
# usage: test_recorder.sh [PYTHON] [REPOSITORY_ROOT] [SPARSIM]   (defaults: /usr/bin/python3, .., none)
set -uo pipefail
py="${1:-/usr/bin/python3}"
root="${2:-$(cd "$(dirname "$0")/.." && pwd)}"
sparsim="${3:-}"
recorder="$root/traces/record_gradients.py"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "ok    $1"; }
fail() { failed=$((failed + 1)); echo "FAIL  $1"; }

# check_trace DIR WORKERS ITERATIONS: grads.npy against layers.json, printed problems
check_trace() {
    "$py" - "$@" <<'EOF'
import json, os, sys
import numpy as np
out, workers, iterations = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
meta = json.load(open(os.path.join(out, "layers.json")))
n = meta["n"]
problems = []
offset = 0
for layer in meta["layers"]:
    if layer["offset"] != offset:
        problems.append(f"layer {layer['name']} starts at {layer['offset']}, expected {offset}")
    if int(np.prod(layer["shape"])) != layer["size"]:
        problems.append(f"layer {layer['name']}: shape {layer['shape']} does not hold {layer['size']}")
    offset += layer["size"]
if offset != n:
    problems.append(f"the layers cover {offset} parameters, n is {n}")
if sum(layer["size"] for layer in meta["layers"]) != n:
    problems.append("n is not the sum of the layer sizes")
path = os.path.join(out, "grads.npy")
grads = np.load(path)
mapped = np.load(path, mmap_mode="r")
expect = (len(iterations), workers, n)
if grads.shape != expect or mapped.shape != expect:
    problems.append(f"grads.npy has shape {grads.shape}, expected {expect}")
if grads.dtype != np.float32 or not grads.flags.c_contiguous:
    problems.append(f"grads.npy is {grads.dtype}, expected float32 in C order")
with open(path, "rb") as f:
    version = np.lib.format.read_magic(f)
    header = np.lib.format.read_array_header_1_0(f) if version == (1, 0) else None
    start = f.tell()
if version != (1, 0) or header != (expect, False, np.dtype("<f4")):
    problems.append(f"header: version {version}, {header}")
if start % 64:
    problems.append(f"the data starts at byte {start}, not a multiple of 64")
if os.path.getsize(path) != start + 4 * int(np.prod(expect)):
    problems.append("grads.npy has bytes beyond its data")
if not np.isfinite(grads).all() or not np.abs(grads).sum(axis=2).all():
    problems.append("a worker's gradient is zero or not finite")
if meta["iterations"] != iterations or meta["workers"] != workers:
    problems.append(f"iterations {meta['iterations']}, workers {meta['workers']}")
if len(meta["loss"]) != meta["iters"]:
    problems.append(f"{len(meta['loss'])} losses for {meta['iters']} iterations")
leftovers = [name for name in os.listdir(out) if name.endswith(".part")]
if leftovers:
    problems.append(f"temporaries left: {leftovers}")
print("\n".join(problems))
EOF
}

for model in cnn lstm transformer; do
    out="$tmp/$model"
    if "$py" "$recorder" --model "$model" --out "$out" --size tiny --workers 2 --iters 4 --record 1-3 \
            >"$tmp/$model.log" 2>&1; then
        problems="$(check_trace "$out" 2 '[1, 2, 3]' 2>&1)"
        if [ -z "$problems" ]; then
            pass "$model: grads.npy (3, 2, n) and its layer table"
        else
            fail "$model: $problems"
        fi
        if [ -n "$sparsim" ]; then
            if "$sparsim" run --algo oktopk --ranks 2 --grad-file "$out" --density 0.05 --out "$tmp/$model-run" \
                    --quiet --no-trace >"$tmp/$model-run.log" 2>&1 &&
                    grep -Eq '"iters":[[:space:]]*3' "$tmp/$model-run/summary.json" &&
                    "$sparsim" workload-stats --grad-file "$out" --density 0.05 --json "$tmp/$model-stats.json" \
                    >>"$tmp/$model-run.log" 2>&1; then
                pass "$model: the trace runs through sparsim run --grad-file and workload-stats"
            else
                fail "$model: sparsim on the trace: $(tail -n 2 "$tmp/$model-run.log")"
            fi
        fi
    else
        fail "$model: exit status $?: $(tail -n 3 "$tmp/$model.log")"
    fi
done

# bench/generic_vs_traces.py on the three traces: every trace's statistics are
# workload-stats' own, and each row's verdict follows from the traces' range
if [ -n "$sparsim" ] && [ -s "$tmp/cnn-stats.json" ]; then
    if "$py" "$root/bench/generic_vs_traces.py" "$tmp/cnn" "$tmp/lstm" "$tmp/transformer" \
            --build "$(dirname "$sparsim")" --work "$tmp/gvt" --density 0.05 --json "$tmp/gvt.json" \
            >"$tmp/gvt.log" 2>&1 && problems="$("$py" - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
d = json.load(open(tmp + "/gvt.json"))
rows = {r["statistic"]: r for r in d["rows"]}
problems = []
if len(rows) < 15 or "rank_log_sd" not in rows:
    problems.append("only %d rows: %s" % (len(rows), sorted(rows)))
for model in ("cnn", "lstm", "transformer"):
    own = json.load(open("%s/%s-stats.json" % (tmp, model)))
    for key in ("zeros", "kth_over_median", "rank_log_sd"):
        if key in rows and rows[key]["traces"].get(model) != own[key]:
            problems.append("%s %s: %r, workload-stats says %r" % (model, key, rows[key]["traces"].get(model), own[key]))
for r in rows.values():
    lo, hi = min(r["traces"].values()), max(r["traces"].values())
    inside = all(lo / 1.25 <= v <= hi * 1.25 for v in r["generator"].values())
    if lo >= 0 and inside != r["in_range"]:
        problems.append("%s: in_range %r, the range says %r" % (r["statistic"], r["in_range"], inside))
print("\n".join(problems))
EOF
)" && [ -z "$problems" ]; then
        pass "generic_vs_traces.py: the traces' own statistics and each row's verdict"
    else
        fail "generic_vs_traces.py: ${problems:-$(tail -n 3 "$tmp/gvt.log")}"
    fi
fi

# The same seed gives the same trace.
if "$py" "$recorder" --model cnn --out "$tmp/again" --size tiny --workers 2 --iters 4 --record 1-3 \
        >/dev/null 2>&1 && cmp -s "$tmp/cnn/grads.npy" "$tmp/again/grads.npy"; then
    pass "the same seed gives the same trace"
else
    fail "two runs with the same seed differ"
fi

# expect_usage_error NAME ARGS...: exit status 2, exactly one line on stderr, no output files
expect_usage_error() {
    local name="$1"
    shift
    "$py" "$recorder" "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
    local status=$?
    local lines
    lines=$(wc -l <"$tmp/usage.err")
    if [ "$status" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -e "$tmp/bad/grads.npy" ]; then
        pass "$name: exit 2, one line: $(cat "$tmp/usage.err")"
    else
        fail "$name: exit status $status, $lines lines on stderr: $(head -c 300 "$tmp/usage.err")"
    fi
}

expect_usage_error "unknown model" --model resnet --out "$tmp/bad" --size tiny
expect_usage_error "--record beyond --iters" --model cnn --out "$tmp/bad" --size tiny --iters 4 --record 7
expect_usage_error "malformed --record" --model cnn --out "$tmp/bad" --size tiny --iters 4 --record 1-x
touch "$tmp/file"
expect_usage_error "unwritable --out" --model cnn --out "$tmp/file/out" --size tiny --iters 4 --record 1

# A run stopped by SIGTERM removes its temporary and leaves no grads.npy.
"$py" "$recorder" --model lstm --out "$tmp/stopped" --size tiny --workers 2 --iters 1000000 --record 0-999999 \
    >/dev/null 2>"$tmp/stopped.err" &
runner=$!
for _ in $(seq 1 100); do      # until the temporary appears (at most 10 s)
    ls "$tmp/stopped"/.grads.npy.*.part >/dev/null 2>&1 && break
    sleep 0.1
done
sleep 0.5
kill -TERM "$runner"
wait "$runner"
status=$?
if [ "$status" -ne 0 ] && [ -d "$tmp/stopped" ] && [ -z "$(ls -A "$tmp/stopped")" ]; then
    pass "SIGTERM: exit status $status, nothing left in --out"
else
    fail "SIGTERM: exit status $status, left: $(ls -A "$tmp/stopped" 2>&1)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
