#!/usr/bin/env bash
# Issue 24's scale target: on dgx-h100 at P = 4096 (512 nodes), BERT's n with
# model payloads, 2 iterations: NCCL's ring and tree and every node-aware sparse
# form, each with its wall time, peak memory, simulated time per iteration and
# message count, as one Markdown row.  Runs two at a time; a run still going
# after CAP seconds is stopped and reported as such (the target is 600 s).
#
#   bench/scale_nodes.sh [SPARSIM [P [CAP [ALGOS]]]]
#     defaults: build/sparsim, 4096, 600, every form below
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sparsim="${1:-$here/../build/sparsim}"
P="${2:-4096}"
cap="${3:-600}"
algos="${4:-nccl-ring,nccl-tree,rail:topka,rail:gtopk,rail:gaussiank,rail:topkdsa,rail:oktopk,leader:topka,leader:gtopk,leader:gaussiank,leader:topkdsa,leader:oktopk}"
work="$(mktemp -d "${TMPDIR:-/tmp}/sparsim-scale-XXXXXX")"
trap 'rm -rf "$work"' EXIT
export sparsim P cap work
one() {
    local a="$1" d="$work/${1//:/_}"
    local t0=$SECONDS
    timeout "$cap" /usr/bin/time -f "%M" -o "$d.rss" "$sparsim" run --algo "$a" --ranks "$P" --platform dgx-h100 \
        --workload bert --payload model --iters 2 --no-csv --no-trace --quiet --out "$d" 2>"$d.err"
    local rc=$? wall=$((SECONDS - t0))
    if [ $rc -eq 0 ]; then
        /usr/bin/python3 - "$a" "$wall" "$d" <<'EOF'
import json, sys
a, wall, d = sys.argv[1], sys.argv[2], sys.argv[3]
s = json.load(open(d + "/summary.json"))
rss = int(open(d + ".rss").read().split()[-1]) / 1024
print("| %s | %s s | %.0f MiB | %.4g ms | %d |" % (a, wall, rss, 1e3 * s["time_per_iter_s"]["mean"], s["messages"]))
EOF
    elif [ $rc -eq 124 ]; then
        echo "| $a | over ${cap} s (stopped) | - | - | - |"
    else
        echo "| $a | failed ($rc): $(tail -n1 "$d.err") | - | - | - |"
    fi
}
export -f one
echo "| algorithm (P = $P, dgx-h100, BERT, model payloads, 2 iterations) | wall | peak memory | simulated time per iteration | messages |"
echo "|---|---|---|---|---|"
tr , '\n' <<<"$algos" | xargs -P 2 -I{} bash -c 'one "$1"' _ {}
