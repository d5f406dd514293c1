# Sourced by run.sh and long.sh (with $out set): the harnesses' input files
# go in memory where there is /dev/shm (on disk, fuzzing runs many times
# slower), in a folder of this run's, removed at its end; the sanitizers'
# defaults for fuzzing.
if [ -w /dev/shm ]; then
    FUZZ_TMP=$(mktemp -d /dev/shm/sparsim-fuzz-run.XXXXXX)
else
    FUZZ_TMP=$(mktemp -d "$out/tmp.XXXXXX")
fi
export FUZZ_TMP
trap 'rm -rf "$FUZZ_TMP"' EXIT
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
