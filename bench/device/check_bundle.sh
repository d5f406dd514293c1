#!/usr/bin/env bash
# bench/device/check_bundle.sh - proves on the build machine that the bundle
# (bench/device/pack.sh) runs with nothing of the system's MPI, SimGrid, GSL,
# cJSON, hwloc, libevent, PMIx... in sight, from a place it was not built in:
#
#   1. copies the bundle to a new temporary folder (the repository lands in an
#      unknown folder on the GPU machine) and unpacks it there;
#   2. in a mount and network namespace of its own (unshare --mount --net;
#      root only; loopback is the only network, as on the GPU machine), hides
#      every file of every Debian package whose libraries the bundle carries
#      (MANIFEST names them), and of Open MPI's, PMIx's, hwloc's plugins' and
#      SimGrid's packages, under /dev/null, and Open MPI's, PMIx's, hwloc's
#      and SimGrid's folders under empty tmpfs; ssh and rsh too (Open MPI must
#      not need them).  A library looked for outside the bundle then fails to
#      load, loudly;
#   3. there, with LD_DEBUG=libs on every process: the bundle's mpirun runs
#      sparsim-mpi at P = 2 (every algorithm, exact payloads), the simulator
#      the same runs, `sparsim compare` holds the message lists side by side,
#      SMPI runs sparsim-smpi at P = 2, test_cuda and gpu_bench load (no GPU
#      here: they say so);
#   4. lists every shared object any of those processes loaded, by folder,
#      and fails if one came from outside the bundle other than the C and C++
#      runtimes (libc, libm, libstdc++, libgcc_s, the dynamic loader: what
#      every Linux that runs CUDA and PyTorch has), or the CUDA driver.
#      /proc/PID/maps of a running rank and of mpirun say the same, second
#      opinion.
#
# With --rehearse OUTDIR it then runs bench/device/run.sh OUTDIR --quick in
# the same namespace (the repository's bundle in place), so that run.sh too is
# shown to use nothing of the system's MPI or SimGrid; for it the machine's
# python3 gets back the zlib, libgfortran and libquadmath that it links
# (the GPU machine has a python3 of its own; the bundle's programs keep
# loading the bundle's copies, as the proof above shows).
#
# With --glibc every program runs under the bundle's own loader and C and C++
# runtimes (lib/glibc), as it would on a machine whose glibc is older than the
# bundle needs: then nothing at all may load from outside the bundle.
#
# usage: bash bench/device/check_bundle.sh [--rehearse OUTDIR] [--glibc] [BUNDLE]   (default bench/device/bundle)
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd -P)/$(basename "$0")"
usage="usage: check_bundle.sh [--rehearse OUTDIR] [--glibc] [BUNDLE]"
multiarch=x86_64-linux-gnu
# what may load from outside the bundle
ALLOWED='/(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libstdc\+\+\.so\.6[.0-9]*|libgcc_s\.so\.1|libcuda\.so[.0-9]*|libnvidia-[a-z-]+\.so[.0-9]*)$'

if [ "${1:-}" != "--inside" ]; then
    rehearse=""
    glibc=""
    while [ $# -gt 0 ]; do
        case "$1" in
        --rehearse)
            [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
            mkdir -p "$2"
            rehearse="$(cd "$2" && pwd -P)"; shift 2 ;;
        --glibc) glibc=1; shift ;;
        *) break ;;
        esac
    done
    [ $# -le 1 ] || { echo "$usage" >&2; exit 2; }
    case "${1:-}" in -*) echo "$usage" >&2; exit 2 ;; esac
    src="${1:-$(dirname "$self")/bundle}"
    [ -f "$src/MANIFEST" ] && [ -f "$src/payload.tar.xz" ] || {
        echo "check_bundle.sh: $src is no bundle (run bash bench/device/pack.sh)" >&2; exit 2; }
    [ "$(id -u)" = 0 ] || { echo "check_bundle.sh: hiding system files takes root (unshare --mount)" >&2; exit 1; }
    command -v unshare >/dev/null || { echo "check_bundle.sh: unshare (util-linux) not found" >&2; exit 1; }
    work="$(mktemp -d /tmp/sparsim-bundle-check.XXXXXX)"
    trap 'rm -rf "$work"' EXIT
    mkdir -p "$work/somewhere/else"
    cp -r "$src" "$work/somewhere/else/bundle"
    rc=0
    unshare --mount --net --propagation private bash "$self" --inside "$work" "$(cd "$(dirname "$self")/../.." && pwd -P)" \
        "$rehearse" "$glibc" || rc=$?
    exit $rc
fi

work="$2"
repo="$3"
rehearse="$4"
# --glibc: every program under the bundle's own loader and C/C++ runtimes, as
# on a machine whose glibc is older than the bundle's (etc/bundle.sh)
if [ -n "$5" ]; then export SPARSIM_BUNDLE_GLIBC=1; fi
b="$work/somewhere/else/bundle"
u="$b.unpacked"   # where unpack.sh puts lib/ and libexec/
log="$work/ld"
mkdir -p "$log" "$work/runs"

# no network but loopback, as on the GPU machine (a namespace of its own)
ip link set lo up 2>/dev/null || true

# --- hide the system's copies --------------------------------------------------
pkgs=$(awk '/^lib\// && $2 != "?" {print $2} /^libexec\/|^lib\/openmpi\/|^lib\/pmix\// {print $2}' "$b/MANIFEST" | sort -u)
pkgs=$(printf '%s\n' $pkgs openmpi-common libsimgrid3.32 libhwloc-plugins libopenmpi-dev libpmix-dev | sort -u)
hidden=0
for p in $pkgs; do
    dpkg -L "$p" >/dev/null 2>&1 || continue
    while read -r f; do
        case "$f" in /usr/share/doc/* | /usr/share/man/* | /usr/include/*) continue ;; esac
        if [ -f "$f" ] && [ ! -L "$f" ]; then
            mount --bind /dev/null "$f"
            hidden=$((hidden + 1))
        fi
    done < <(dpkg -L "$p")
done
for f in /usr/bin/ssh /usr/bin/rsh; do
    [ -e "$f" ] && mount --bind /dev/null "$(readlink -f "$f")" && hidden=$((hidden + 1))
done
dirs=0
for d in /usr/lib/$multiarch/openmpi /usr/lib/$multiarch/pmix2 /usr/lib/$multiarch/simgrid /usr/lib/$multiarch/hwloc \
         /usr/share/openmpi /usr/share/pmix /etc/openmpi /usr/lib/$multiarch/openmpi/include; do
    [ -d "$d" ] && mount -t tmpfs -o size=1m,ro none "$d" && dirs=$((dirs + 1))
done
echo "hidden: $hidden system files (of: $(echo $pkgs | tr '\n' ' ')) and $dirs folders"
for f in /usr/bin/mpirun /usr/lib/$multiarch/libmpi.so.40 /usr/lib/$multiarch/libsimgrid.so.3.32 \
         /usr/lib/$multiarch/libgsl.so.27; do
    [ -s "$(readlink -f "$f")" ] && { echo "check_bundle.sh: $f is still visible" >&2; exit 1; }
done
[ -z "$(ls -A /usr/lib/$multiarch/openmpi)" ] || { echo "check_bundle.sh: Open MPI's folder is still visible" >&2; exit 1; }

# --- run from the bundle, every process logging what it loads ------------------
export PATH="$b/bin:/usr/bin:/bin"
. "$b/env.sh"
echo "mpirun: $(command -v mpirun) ($(mpirun --version | head -1))"
cd "$work/runs"
# only the programs started here: the shell tools that smpirun and the
# wrappers run (sh, dirname, sed...) are the machine's, and logged apart
traced() { LD_DEBUG=libs LD_DEBUG_OUTPUT="$log/ld" "$@"; }
fail=0
say() { printf '%-58s %s\n' "$1" "$2"; }
common=(--ranks 2 --n 100003 --density 0.01 --iters 3 --quiet --no-trace)
for algo in ring recdoubling rabenseifner topka gtopk gaussiank topkdsa oktopk; do
    if traced mpirun -np 2 sparsim-mpi run --algo "$algo" "${common[@]}" --out "mpi-$algo" >"mpi-$algo.log" 2>&1 &&
        traced sparsim run --algo "$algo" "${common[@]}" --out "sim-$algo" >"sim-$algo.log" 2>&1 &&
        traced sparsim compare "sim-$algo" "mpi-$algo" >"cmp-$algo.log" 2>&1 && grep -q identical "cmp-$algo.log"; then
        say "P = 2 $algo: sparsim-mpi under mpirun, sparsim, compare" "ok (message lists identical)"
    else
        say "P = 2 $algo: sparsim-mpi under mpirun, sparsim, compare" "FAILED"
        tail -5 "mpi-$algo.log" "sim-$algo.log" "cmp-$algo.log" 2>/dev/null | grep -v LD_DEBUG || true
        fail=1
    fi
done
if [ -x "$b/bin/smpirun" ]; then
    sparsim platform 1gbe --ranks 2 >p2.xml
    printf 'node-0\nnode-1\n' >h2
    if traced smpirun -np 2 -platform p2.xml -hostfile h2 --cfg=smpi/simulate-computation:no --log=root.thres:critical \
        "$u/libexec/sparsim-smpi" run --algo topka "${common[@]}" --out smpi-topka >smpi.log 2>&1 &&
        [ -s smpi-topka/summary.json ]; then
        say "P = 2 topka: sparsim-smpi under smpirun" "ok"
    else
        say "P = 2 topka: sparsim-smpi under smpirun" "FAILED"; tail -5 smpi.log; fail=1
    fi
fi
rc=0; traced test_cuda --quick >test_cuda.log 2>&1 || rc=$?
say "test_cuda --quick" "exit $rc: $(tail -1 test_cuda.log)"
[ $rc = 77 ] || [ $rc = 0 ] || fail=1
rc=0; traced gpu_bench --sizes 10 --reps 1 >gpu_bench.log 2>&1 || rc=$?
say "gpu_bench --sizes 10" "exit $rc: $(tail -1 gpu_bench.log)"
grep -q -i "error while loading\|cannot open shared" gpu_bench.log && fail=1

# /proc/PID/maps of mpirun and of a rank while a longer job runs
mpirun -np 2 sparsim-mpi run --algo topka --ranks 2 --n 1M --density 0.01 --iters 60 --quiet --no-trace \
    --out maps-run >maps-run.log 2>&1 &
mpirun_pid=$!
maps=""
for _ in $(seq 1 200); do
    sleep 0.05
    for p in /proc/[0-9]*; do
        # (by its command line: under the bundle's loader, exe is the loader)
        grep -q -- "$u/libexec/sparsim-mpi " <<<"$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" &&
            grep -q 'mca_pml_ob1' "$p/maps" 2>/dev/null && maps="$maps $p"
    done
    [ -z "$maps" ] || break
done
for p in /proc/[0-9]*; do
    grep -q -- "$u/libexec/orterun " <<<"$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" && maps="$maps $p"
done
maps_libs=$(for p in $maps; do awk '$6 ~ /\.so/ {print $6}' "$p/maps" 2>/dev/null; done | sort -u)
wait $mpirun_pid || { echo "the /proc/PID/maps job failed: $(tail -2 maps-run.log)"; fail=1; }
[ -n "$maps_libs" ] || { echo "check_bundle.sh: caught no running rank to read /proc/PID/maps from"; fail=1; }

# --- what was loaded, from where ------------------------------------------------
# each process that ran a program of the bundle (a wrapper is sh first, then
# execs libexec/NAME in the same process: its log holds both), all it loaded
ours=$(grep -l "initialize program: $b" "$log"/ld.* || true)
loaded=$(cat $ours | sed -n 's/.*calling init: \(.*\)$/\1/p' | sort -u)
others=$(grep -L "initialize program: $b" "$log"/ld.* | xargs -r grep -h "initialize program:" |
         awk '{print $NF}' | xargs -r -n1 basename | sort -u | tr '\n' ' ')
echo
echo "LD_DEBUG=libs: $(echo $ours | wc -w) processes ran programs of the bundle, $(echo "$loaded" | wc -l) distinct shared objects"
echo "loaded in them (not counted: $(ls "$log" | wc -l) logs in all; the others ran the machine's $others)"
echo "  from the bundle ($b, unpacked in $u):"
echo "$loaded" | grep "^$b" | sed "s|^$u/||; s|^$b/||" | awk -F/ '{d = NF > 1 ? $1 "/" (NF > 2 ? $2 "/" : "") : ""; n[d]++; if (n[d] <= 100) l[d] = l[d] " " $NF} END {for (d in n) printf "    %s (%d):%s\n", d, n[d], l[d]}' | sort | fold -w 160 -s
echo "  from elsewhere:"
outside=$(echo "$loaded" | grep -v "^$b" || true)
bad=0
for f in $outside; do
    if [[ "$f" =~ $ALLOWED ]]; then
        echo "    $f (allowed: C/C++ runtime)"
    elif [[ "$f" =~ ^/tmp/sparsim-smpi_[0-9]+_[0-9]+\.so$ ]]; then
        echo "    $f (allowed: SMPI's per-rank copy of libexec/sparsim-smpi)"
    else
        echo "    $f NOT ALLOWED"; bad=1
    fi
done
echo
echo "/proc/PID/maps of mpirun and a running rank: $(echo "$maps_libs" | grep -c "^$b" || true) objects from the bundle; from elsewhere:"
for f in $(echo "$maps_libs" | grep -v "^$b" || true); do
    if [[ "$f" =~ $ALLOWED ]]; then echo "    $f (allowed)"; else echo "    $f NOT ALLOWED"; bad=1; fi
done
errors=$(cat "$log"/ld.* | grep -c -E "error while loading|cannot open shared object" || true)
[ "$errors" = 0 ] || { echo "the loader reported $errors errors (a library looked for outside the bundle)"; bad=1; }
echo
if [ $fail = 0 ] && [ $bad = 0 ]; then
    echo "check_bundle: PASSED (every run ok; nothing loaded from outside the bundle but the C/C++ runtimes)"
else
    echo "check_bundle: FAILED"
    exit 1
fi
[ -n "$rehearse" ] || exit 0

# --- the GPU machine's script, in the same namespace ---------------------------
echo
echo "rehearsal: bench/device/run.sh $rehearse --quick, system MPI and SimGrid still hidden"
for p in zlib1g libgfortran5 libquadmath0; do
    dpkg -L "$p" | while read -r f; do
        [ -d "$f" ] || umount "$f" 2>/dev/null || true   # a hidden file is /dev/null now, no longer -f
    done
done
cd "$repo"
PATH=/usr/bin:/bin bash bench/device/run.sh "$rehearse" --quick
