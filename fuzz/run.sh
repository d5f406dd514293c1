#!/usr/bin/env bash
# Fuzzes the readers: builds the harnesses (build.sh), replays every saved
# regression input, then runs each harness for SECONDS over its seed corpus
# and the regression inputs (new inputs go to the build folder, not here).
#
#   fuzz/run.sh SECONDS [TARGET...]     targets: config npy device sweep_csv summary
#
# FUZZ_BUILD names the build folder (default: build-fuzz/ at the top).
# Exit: 0 no crash, 1 a crash (its input is kept as BUILD/artifacts/TARGET-*),
# 77 skipped: no clang with libFuzzer here (said on stderr).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
secs="${1:?usage: fuzz/run.sh SECONDS [TARGET...]}"
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(config npy device sweep_csv summary)
out="${FUZZ_BUILD:-$root/build-fuzz}"

bash "$here/build.sh" "$out" >/dev/null
rc=$?
if [ $rc -eq 77 ]; then
    echo "fuzz: SKIPPED: no clang with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev)" >&2
    exit 77
elif [ $rc -ne 0 ]; then
    echo "fuzz: the harnesses did not build" >&2
    exit 1
fi

. "$here/tmp_env.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:abort_on_error=0"
# known defects awaiting their owners (regressions/open/README.md): their
# inputs are replayed apart, and fuzzing goes past them (the leaks and the
# undefined behaviour the suppression files there name)
open="$here/regressions/open"
fuzz_lsan="suppressions=$open/lsan.supp"
fuzz_ubsan="$UBSAN_OPTIONS:suppressions=$open/ubsan.supp"
# one target: its replay, its open defects, its fuzzing; what it says goes to
# stdout and stderr as before, its outcome is the exit status
fuzz_one() {
    local t="$1"
    bin="$out/fuzz_$t"
    if [ ! -x "$bin" ]; then
        echo "fuzz: no harness for '$t'" >&2
        return 1
    fi
    mkdir -p "$out/corpus/$t" "$out/artifacts" "$out/logs"
    log="$out/logs/$t.log"
    regs=("$here/regressions/$t"/*)
    ok=1
    # every input that once crashed must pass, one by one
    if [ -e "${regs[0]}" ]; then
        if ! "$bin" -timeout=20 -rss_limit_mb=4096 "${regs[@]}" >"$log.replay" 2>&1; then
            echo "fuzz: $t: a regression input fails again:" >&2
            grep -m5 -E "ERROR|runtime error|Running:" "$log.replay" >&2
            ok=0
        fi
    fi
    for o in "$open/$t"/*; do
        [ -e "$o" ] || continue
        if "$bin" -timeout=20 -rss_limit_mb=4096 "$o" >"$log.open" 2>&1; then
            echo "fuzz: $t: open defect $(basename "$o") no longer fails: move it to regressions/$t/"
        else
            echo "fuzz: $t: open defect $(basename "$o") still fails (regressions/open/README.md)"
        fi
    done
    dict=()
    [ -f "$here/dicts/$t.dict" ] && dict=(-dict="$here/dicts/$t.dict")
    dirs=("$out/corpus/$t" "$here/corpus/$t")
    [ -d "$here/regressions/$t" ] && dirs+=("$here/regressions/$t")
    if [ $ok -eq 1 ] && ! LSAN_OPTIONS="$fuzz_lsan" UBSAN_OPTIONS="$fuzz_ubsan" "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        "${dict[@]}" -artifact_prefix="$out/artifacts/$t-" "${dirs[@]}" >"$log" 2>&1; then
        echo "fuzz: $t: a crash (input in $out/artifacts/$t-*):" >&2
        grep -m8 -E "ERROR|runtime error|SUMMARY|#[0-9]+ 0x" "$log" >&2
        ok=0
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    [ $ok -eq 1 ] && echo "fuzz: $t: ${runs:-0} inputs in ${secs} s, ${cov:-cov: ?}, no crash"
    [ $ok -eq 1 ]
}
# the targets side by side, one per core (each fuzzes for SECONDS of wall
# time); their words shown in the targets' order once all are done
mkdir -p "$out/logs"
pids=()
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do
        wait -n || true
    done
    fuzz_one "$t" >"$out/logs/$t.said" 2>&1 &
    pids+=($!)
done
passed=0
failed=0
for i in "${!targets[@]}"; do
    if wait "${pids[$i]}"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
    cat "$out/logs/${targets[$i]}.said"
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
