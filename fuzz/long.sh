#!/usr/bin/env bash
# A fuzzing campaign on one reader: SECONDS of libFuzzer in fork mode (one
# worker, going on past crashes so that one run finds them all), its new
# inputs kept in the build folder, each distinct crash's input and report in
# BUILD/campaign/TARGET/.  Prints executions, coverage and crashes.
#
#   fuzz/long.sh SECONDS TARGET        (FUZZ_BUILD: the build folder)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
secs="${1:?usage: fuzz/long.sh SECONDS TARGET}"
t="${2:?usage: fuzz/long.sh SECONDS TARGET}"
out="${FUZZ_BUILD:-$root/build-fuzz}"
bash "$here/build.sh" "$out" >/dev/null || exit $?
camp="$out/campaign/$t"
mkdir -p "$camp/crashes" "$out/corpus/$t"
dict=()
[ -f "$here/dicts/$t.dict" ] && dict=(-dict="$here/dicts/$t.dict")
dirs=("$out/corpus/$t" "$here/corpus/$t")
[ -d "$here/regressions/$t" ] && dirs+=("$here/regressions/$t")
. "$here/tmp_env.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
# known defects awaiting their owners (regressions/open/README.md): gone past
export LSAN_OPTIONS="suppressions=$here/regressions/open/lsan.supp"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:suppressions=$here/regressions/open/ubsan.supp"
start=$(date +%s)
"$out/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$secs" -timeout=20 \
    -rss_limit_mb=4096 "${dict[@]}" -artifact_prefix="$camp/crashes/" "${dirs[@]}" >"$camp/log" 2>&1
took=$(($(date +%s) - start))
execs=$(grep -oE '^#[0-9]+' "$camp/log" | tail -1 | tr -d '#')
cov=$(grep -oE 'cov: [0-9]+' "$camp/log" | tail -1)
ncrash=$(find "$camp/crashes" -type f | wc -l)
echo "$t: $took s, ${execs:-?} executions, ${cov:-cov: ?}, $ncrash crash inputs"
# one line per distinct crash: the first frame of the project's code
grep -hE "^(==[0-9]+==ERROR|SUMMARY)" "$camp/log" "$out"/fuzz-*.log 2>/dev/null | sort | uniq -c | head -20
