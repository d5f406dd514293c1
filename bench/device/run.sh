#!/usr/bin/env bash
# bench/device/run.sh - everything issue 25 asks of the GPU machine, as one
# command, from the bundle that bench/device/pack.sh made (carried beside the
# repository: the machine has no MPI, SimGrid, GSL or cJSON of its own).
#
# Steps, in order of importance; each writes its log, says ok, FAILED or
# SKIPPED with the reason, and is cut off at its own limit and at what is left
# of --budget (default 510 s, under the machine's 10 minutes a command;
# a step expected to need more than is left is skipped by name):
#   facts         the machine: nvidia-smi, cores, driver, glibc, python3
#   bundle        the bundle unpacks, its glibc and libraries are there,
#                 mpirun runs sparsim-mpi at P = 2
#   test_cuda     the kernels against the CPU's, bit for bit (n to 2^27)
#   test_cuda_mpi sparsim-mpi --select cuda at P = 1, 2, 4 and 8 ranks sharing
#                 the GPU, every algorithm: the same result bits as the CPU run
#                 on the same gradient file, the same messages (sparsim compare),
#                 and as the simulator's
#   memcheck_mpi  compute-sanitizer memcheck on one sparsim-mpi --select cuda
#                 job at P = 2 with every algorithm
#   calibrate     sparsim-mpi calibrate --select cuda: the device profile
#   gpu_bench     the selection kernels at n = 2^24..2^28, densities 0.001,
#                 0.01, 0.05: against the HBM peak and a CUB radix sort
#   validation    bench/mpi_validation.py part 1 at P = 2, 4, 8, 16 (one rank
#                 per core), calibrated here, every algorithm: simulated
#                 against measured per iteration (target: within 25%)
#   memcheck_cuda compute-sanitizer memcheck on test_cuda --quick
#   smpi          its part 2: sparsim against SMPI (sparsim-smpi) at P = 16, 64
#   cuda_times    s/iter of TopkA, Gaussian-k, Ok-Topk with --select cpu and
#                 cuda at P = 1, 2, 4, 8, n = 16M
# The GPU steps skip by name where there is no GPU, so the whole script runs
# on any machine; --quick takes the sizes a 2-core machine can hold.  A
# rehearsal without a GPU may name a sparsim-mpi-emu (tests/select_cuda_emu.c:
# the CPU plays the GPU) with --emulated-gpu FILE: test_cuda_mpi, calibrate and
# cuda_times then run through it (their numbers mean nothing; the script's
# plumbing is what they test).
#
# OUTDIR ends up with at most 8 files: summary.md (also printed), console.log,
# results.tar.gz (every log and table), validation.md, gpu_bench.md,
# cuda_times.md, device-gpu.json (the calibrated profile); the tables and the
# archive are rewritten after every step, so a run cut short still leaves them.
#
# usage: bash bench/device/run.sh OUTDIR [--quick] [--budget SECONDS] [--emulated-gpu FILE]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd -P)"
repo="$(cd "$here/../.." && pwd -P)"
B="$here/bundle"

if [ "${1:-}" = "--step" ]; then
    # one step, run by the loop below in a process of its own (limited by
    # timeout); W, B, QUICK and GPU come from the environment
    [ -n "${W:-}" ] && [ $# -eq 2 ] || { echo "run.sh: --step is for run.sh itself (usage: run.sh OUTDIR ...)" >&2; exit 2; }
    step="$2"
    cd "$repo"
    . "$B/env.sh"
    # what an earlier step found this machine needs (the bundle step's fallback)
    if [ -f "$W/extra.env" ]; then . "$W/extra.env"; fi
    export SPARSIM_MPIRUN="$B/bin/mpirun" SPARSIM_SMPIRUN="$B/bin/smpirun" PYTHONUNBUFFERED=1
    skip() { echo "SKIPPED: $*"; exit 77; }
    nogpu() { [ "$GPU" = 1 ] || skip "no GPU here ($GPU_WHY)"; }
    # the steps that reach the GPU through sparsim-mpi run on an emulated one too
    mpi_bin="$B/bin/sparsim-mpi"
    if [ -n "$EMU" ]; then
        nogpu_mpi() { :; }
        mpi_bin="$EMU"
    else
        nogpu_mpi() { nogpu; }
    fi
    sanitizer() { command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true; }
    case "$step" in
    facts)
        {
            echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '(no git)')"
            echo "bundle: $(head -1 "$B/MANIFEST" | sed 's/^# bench\/device\/bundle: //')"
            echo "host: $(uname -srm); $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
            echo "cores: $(nproc) (nproc); memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
            echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
            echo "glibc: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo '?'); bundle $(grep '^needs' "$B/MANIFEST")"
            echo "python: ${PY:-none with numpy} $([ -z "$PY" ] || "$PY" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)')"
            echo "nvcc: $(nvcc --version 2>/dev/null | tail -2 | head -1 || echo 'not found')"
            echo "compute-sanitizer: $(s=$(sanitizer); [ -n "$s" ] && "$s" --version 2>/dev/null | grep -i version | head -1 || echo 'not found')"
            [ -z "$EMU" ] || echo "GPU steps through sparsim-mpi: EMULATED by $EMU (the CPU plays the GPU)"
            if [ "$GPU" = 1 ]; then
                echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,pci.bus_id \
                    --format=csv,noheader 2>&1 || echo '/dev/nvidia0 present; nvidia-smi not found')"
            else
                echo "GPU: none ($GPU_WHY)"
            fi
        } | tee "$W/facts.txt"
        [ "$GPU" = 1 ] && nvidia-smi -q >"$W/nvidia-smi.txt" 2>&1 || true
        lscpu >"$W/lscpu.txt" 2>&1 || true
        echo "RESULT: $(nproc) cores; $(grep '^GPU:' "$W/facts.txt")"
        ;;
    bundle)
        need=$(cat "$B/etc/glibc-needed")
        have=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
        u="$B.unpacked"
        own=${SPARSIM_BUNDLE_GLIBC:-}
        if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
            own=1
            echo "this glibc is $have, the bundle needs $need: its programs run under its own (lib/glibc)"
        fi
        missing=0
        for e in "$u"/libexec/*; do
            if [ -n "$own" ]; then
                deps=$("$u/lib/glibc/ld-linux-x86-64.so.2" --library-path "$u/lib/glibc:$u/lib" --list "$e" 2>&1 || true)
            else
                deps=$(LD_LIBRARY_PATH="$u/lib" ldd "$e" 2>&1 || true)
            fi
            if grep -E "not found" <<<"$deps"; then
                echo "$e: a library is missing (above)"; missing=1
            fi
        done
        [ $missing = 0 ] || { echo "RESULT: libraries missing (see the log)"; exit 1; }
        mpirun --version | head -1
        p2=(run --algo topka --ranks 2 --n 100003 --density 0.01 --iters 3 --quiet --no-trace --out "$W/runs/bundle-p2")
        if mpirun -np 2 sparsim-mpi "${p2[@]}"; then
            echo "RESULT: glibc $have$([ -n "$own" ] && echo ", the bundle's own used (it needs $need)" || echo " >= $need");" \
                "every library found; mpirun -np 2 sparsim-mpi ran"
        else
            # a virtual machine may refuse the single-copy transfer between
            # processes (cross-memory attach) that shared memory uses by default
            echo "== again without the single-copy mechanism"
            export OMPI_MCA_btl_vader_single_copy_mechanism=none
            mpirun -np 2 sparsim-mpi "${p2[@]}"
            echo "export OMPI_MCA_btl_vader_single_copy_mechanism=none" >"$W/extra.env"
            echo "RESULT: mpirun -np 2 sparsim-mpi ran only without cross-memory attach (set so for every step)"
        fi
        ;;
    test_cuda)
        rc=0
        qarg=()
        if [ "$QUICK" = 1 ]; then qarg=(--quick); fi
        test_cuda "${qarg[@]}" || rc=$?
        [ $rc = 77 ] && [ "$GPU" = 0 ] && exit 77   # it said why
        [ $rc = 77 ] && { echo "RESULT: skipped on a machine with a GPU"; exit 1; }
        exit $rc
        ;;
    test_cuda_mpi)
        ranks=$([ "$QUICK" = 1 ] && echo 1,2 || echo 1,2,4,8)
        rc=0
        [ -n "$PY" ] || skip "no python3 with numpy"
        "$PY" tests/test_cuda_mpi.py "$B/bin/sparsim" "$mpi_bin" --ranks "$ranks" ${EMU:+--emulated} || rc=$?
        [ $rc = 77 ] && [ "$GPU" = 0 ] && exit 77
        [ $rc = 77 ] && { echo "RESULT: skipped on a machine with a GPU"; exit 1; }
        exit $rc
        ;;
    memcheck_mpi)
        nogpu
        cs=$(sanitizer)
        [ -n "$cs" ] || skip "compute-sanitizer not found"
        args=(run --algo "ring,recdoubling,rabenseifner,topka,gtopk,gaussiank,topkdsa,oktopk" --ranks 2 --n 65537
              --density 0.01 --iters 2 --select cuda --quiet --no-trace --out "$W/runs/memcheck")
        mc=("$cs" --tool memcheck --error-exitcode 86 --target-processes all)
        # the sanitizer under mpirun, one per rank (NVIDIA's way for MPI); if it
        # cannot start so (it inherits the bundle's LD_LIBRARY_PATH there),
        # mpirun under the sanitizer, which follows every process it starts
        rc=0
        mpirun -np 2 "${mc[@]}" "$mpi_bin" "${args[@]}" || rc=$?
        if [ $rc != 0 ] && [ $rc != 86 ]; then
            echo "== exit $rc: again with mpirun under compute-sanitizer"
            rm -rf "$W/runs/memcheck"
            rc=0
            "${mc[@]}" "$B/bin/mpirun" -np 2 "$mpi_bin" "${args[@]}" || rc=$?
        fi
        echo "RESULT: sparsim-mpi --select cuda, P = 2, every algorithm: exit $rc; $(grep -c \
            'ERROR SUMMARY: 0 errors' "$W/logs/memcheck_mpi.log" || true) processes with 0 errors"
        exit $rc
        ;;
    memcheck_cuda)
        nogpu
        cs=$(sanitizer)
        [ -n "$cs" ] || skip "compute-sanitizer not found"
        rc=0
        "$cs" --tool memcheck --error-exitcode 86 --target-processes all test_cuda --quick || rc=$?
        [ $rc = 77 ] && { echo "RESULT: test_cuda skipped under the sanitizer on a machine with a GPU"; exit 1; }
        [ $rc = 0 ] || exit $rc
        echo "RESULT: test_cuda --quick: $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$W/logs/memcheck_cuda.log" | tail -1)"
        ;;
    calibrate)
        nogpu_mpi
        mpirun -np 2 "$mpi_bin" calibrate --select cuda --out "$W/calib-gpu"
        cp "$W/calib-gpu/device.json" "$W/device-gpu.json"
        echo "RESULT: device profile written (device-gpu.json)"
        ;;
    gpu_bench)
        nogpu
        sizes=$([ "$QUICK" = 1 ] && echo 20,22 || echo 24,25,26,27,28)
        gpu_bench --sizes "$sizes" --densities 0.001,0.01,0.05 --reps 5 --no-cpu | tee "$W/gpu_bench.md"
        echo "RESULT: table in gpu_bench.md"
        ;;
    validation)
        ranks=$([ "$QUICK" = 1 ] && echo 2 || echo 2,4,8,16)
        "${PY:-python3}" bench/mpi_validation.py --build "$B/bin" --parts 1 --ranks "$ranks" --algos all |
            tee "$W/validation.md"
        echo "RESULT: $(grep '^verdict:' "$W/validation.md")"
        ;;
    smpi)
        [ -x "$B.unpacked/libexec/sparsim-smpi" ] || skip "the bundle was packed without SMPI (pack.sh --no-smpi)"
        ranks=$([ "$QUICK" = 1 ] && echo 4,16 || echo 16,64)
        "${PY:-python3}" bench/mpi_validation.py --build "$B/bin" --parts 2 --smpi-ranks "$ranks" \
            --smpi-bin "$B.unpacked/libexec/sparsim-smpi" | tee "$W/smpi.md"
        echo "RESULT: sparsim against SMPI at P = $ranks in validation.md"
        ;;
    cuda_times)
        nogpu_mpi
        ranks=$([ "$QUICK" = 1 ] && echo "1 2" || echo "1 2 4 8")
        n=$([ "$QUICK" = 1 ] && echo 1M || echo 16M)
        for P in $ranks; do
            for sel in cpu cuda; do
                mpirun -np "$P" "$mpi_bin" run --algo topka,gaussiank,oktopk --ranks "$P" --n "$n" --density 0.01 \
                    --iters 4 --select "$sel" --quiet --no-trace --no-csv --out "$W/runs/times-$sel-$P"
            done
        done
        "${PY:-python3}" - "$W" "$n" $ranks <<'EOF' | tee "$W/cuda_times.md"
import json, os, statistics, sys
w, n, ranks = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
print("sparsim-mpi, n = %s, density 0.01, 4 iterations (the first left out), ranks sharing one GPU; the GPU "
      "columns are the means over ranks of each iteration's stats\n" % n)
print("| algorithm | P | cpu s/iter | cuda s/iter | cpu / cuda | gpu kernels s/iter | pairs to host s/iter | "
      "gradient upload s/iter |")
print("|---|---|---|---|---|---|---|---|")
def stats(sel, P, algo):
    s = json.load(open(os.path.join(w, "runs", "times-%s-%d" % (sel, P), algo, "summary.json")))
    its = s["iterations"][1:]
    t = statistics.mean(it["time_s"] for it in its)
    def stat(key):  # each iteration's mean over the ranks
        v = [it.get("stats", {}).get(key, {}).get("mean") for it in its]
        v = [x for x in v if isinstance(x, (int, float))]
        return statistics.mean(v) if v else float("nan")
    return t, stat("gpu_kernel_s"), stat("gpu_copy_s"), stat("gpu_upload_s")
for algo in ("topka", "gaussiank", "oktopk"):
    for P in ranks:
        c, g = stats("cpu", P, algo), stats("cuda", P, algo)
        print("| %s | %d | %.4g | %.4g | %.2f | %.4g | %.4g | %.4g |" % (algo, P, c[0], g[0], c[0] / g[0], g[1], g[2],
                                                                     g[3]))
EOF
        echo "RESULT: table in cuda_times.md"
        ;;
    *) echo "run.sh: unknown step $step" >&2; exit 2 ;;
    esac
    exit 0
fi

usage="usage: bash bench/device/run.sh OUTDIR [--quick] [--budget SECONDS] [--emulated-gpu FILE]"
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || { echo "$usage" >&2; exit 2; }
out="$1"; shift
quick=0; budget=510; emu=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1; shift ;;
    --budget) [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "run.sh: --budget takes whole seconds" >&2; exit 2; }
        budget="$2"; shift 2 ;;
    --emulated-gpu) [ -x "${2:-}" ] || { echo "run.sh: --emulated-gpu takes a sparsim-mpi-emu program" >&2; exit 2; }
        emu="$(cd "$(dirname "$2")" && pwd -P)/$(basename "$2")"; shift 2 ;;
    *) echo "run.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
    esac
done
[ -f "$B/MANIFEST" ] && [ -f "$B/payload.tar.xz" ] || {
    echo "run.sh: no bundle at bench/device/bundle (make it with bash bench/device/pack.sh; carry it along)" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd -P)"
[ -z "$(ls -A "$out")" ] || { echo "run.sh: $out is not empty" >&2; exit 2; }
W="$(mktemp -d "${TMPDIR:-/tmp}/sparsim-device-run.XXXXXX")"
mkdir -p "$W/logs" "$W/runs"
exec > >(tee -a "$out/console.log") 2>&1
sh "$B/unpack.sh"

# the driver's tools may lie outside PATH (a read-only driver mount)
for d in /usr/local/nvidia/bin /usr/local/cuda/bin; do
    if [ -d "$d" ]; then case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac; fi
done
export PATH
GPU=0; GPU_WHY="nvidia-smi not found"
if command -v nvidia-smi >/dev/null; then
    if nvidia-smi -L 2>/dev/null | grep '^GPU ' >/dev/null; then GPU=1; GPU_WHY=""; else GPU_WHY="nvidia-smi lists no GPU"; fi
elif [ -e /dev/nvidia0 ]; then
    GPU=1; GPU_WHY=""   # a device node without nvidia-smi: the CUDA steps say what they find
fi
# the first python3 with numpy (test_cuda_mpi needs it; a build machine's
# PATH may put one without it first)
PY=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then PY="$(command -v "$p")"; break; fi
done
export W B GPU GPU_WHY PY QUICK=$quick EMU=$emu
t0=$(date +%s)
rows=()

collect() { # the tables and the archive in OUTDIR, after every step
    for f in gpu_bench.md cuda_times.md device-gpu.json; do
        if [ -f "$W/$f" ]; then cp "$W/$f" "$out/$f.part" && mv "$out/$f.part" "$out/$f"; fi
    done
    if [ -f "$W/validation.md" ] || [ -f "$W/smpi.md" ]; then
        { cat "$W/validation.md" 2>/dev/null || true
          if [ -f "$W/smpi.md" ]; then echo; echo "## SMPI (part 2)"; echo; cat "$W/smpi.md"; fi
        } >"$out/validation.md.part" && mv "$out/validation.md.part" "$out/validation.md"
    fi
    {
        echo "# bench/device/run.sh$([ $quick = 1 ] && echo ' --quick')${emu:+ --emulated-gpu $(basename "$emu")}"
        echo
        sed 's/^/    /' "$W/facts.txt" 2>/dev/null || true
        echo
        echo "| step | result | seconds | what it says |"
        echo "|---|---|---|---|"
        printf '%s\n' "${rows[@]}"
        echo
        echo "wall time: $(( $(date +%s) - t0 )) s of a budget of $budget s"
    } >"$W/summary.md"
    cp "$W/summary.md" "$out/summary.md"
    tar -C "$W" -czf "$out/results.tar.gz.part" --exclude='./runs/*/messages.csv' . && \
        mv "$out/results.tar.gz.part" "$out/results.tar.gz"
}

# name, expected seconds (to skip what cannot fit), limit in seconds
steps=(
    "facts 5 30" "bundle 10 60" "test_cuda 40 240" "test_cuda_mpi 100 300" "memcheck_mpi 40 180"
    "calibrate 25 120" "gpu_bench 40 240" "validation 120 300" "memcheck_cuda 60 180" "smpi 30 120"
    "cuda_times 40 180"
)
for s in "${steps[@]}"; do
    read -r name expect limit <<<"$s"
    left=$(( budget - ($(date +%s) - t0) ))
    log="$W/logs/$name.log"
    printf '\n== %s (%d s in, %d s left)\n' "$name" $(( $(date +%s) - t0 )) "$left"
    if [ "$left" -lt "$expect" ]; then
        rows+=("| $name | SKIPPED | 0 | not started: $left s left of the budget, it needs about $expect |")
        echo "SKIPPED: $left s left"
        continue
    fi
    [ "$limit" -le "$left" ] || limit=$left
    s0=$(date +%s); rc=0
    timeout -k 10 "$limit" bash "$here/run.sh" --step "$name" >"$log" 2>&1 || rc=$?
    secs=$(( $(date +%s) - s0 ))
    tail -n 25 "$log"
    note=$(grep -E '^(RESULT|SKIPPED|FAIL|test_cuda[a-z_]*: SKIPPED|[0-9]+ checks, [0-9]+ failed)' "$log" | tail -1 |
           sed 's/^RESULT: //; s/|/\//g' || true)
    case $rc in
    0) result=ok ;;
    77) result=SKIPPED; [ -n "$note" ] || note=$(tail -1 "$log" | sed 's/|/\//g') ;;
    124 | 137) result=FAILED; note="stopped at its limit of $limit s; $note" ;;
    *) result=FAILED; [ -n "$note" ] || note="exit $rc: $(tail -1 "$log" | sed 's/|/\//g')" ;;
    esac
    rows+=("| $name | $result | $secs | ${note:0:300} |")
    collect
done
collect
echo
cat "$out/summary.md"
rm -rf "$W"
! printf '%s\n' "${rows[@]}" | grep '| FAILED |' >/dev/null
