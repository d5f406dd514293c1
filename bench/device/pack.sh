#!/usr/bin/env bash
# bench/device/pack.sh - builds sparsim for a GPU machine that has CUDA's
# driver and tools but no OpenMPI, SimGrid, GSL, cJSON or package manager, and
# lays out everything it needs beyond the C and C++ runtimes in ONE folder
# that git ignores (bench/device/bundle/), to travel with the repository:
#
#   bin/      sh wrappers, one per program: each sources etc/bundle.sh
#             (LD_LIBRARY_PATH, OPAL_* and PMIX_* pointing into the bundle)
#             and execs the real program in libexec/; mpirun is Open MPI's
#             orterun so wrapped, smpirun SimGrid's script with its paths
#             made relative to the bundle
# and, packed into payload.tar.xz (below):
#   libexec/  the programs: sparsim, sparsim-mpi (with the CUDA kernels),
#             test_cuda, gpu_bench, raw_mpi_allgather, sparsim-smpi,
#             orterun, orted, ompi_info, smpimain
#   lib/      every shared library they load, found by ldd, except the C and
#             C++ runtimes (ALLOWED below: any Linux that runs CUDA has them),
#             which are in lib/glibc for a machine whose glibc is too old
#   lib/openmpi, lib/pmix   Open MPI's and PMIx's plugins, from `dpkg -L`
#             of the installed Debian packages, without those that need
#             InfiniBand, UCX, libfabric, PSM or Java (one machine needs none)
#   share/    Open MPI's and PMIx's help texts; etc/ the bundle's settings
#   env.sh    `. env.sh` puts bin/ first on PATH (and nothing else: the
#             libraries reach the programs only through their wrappers, so
#             the machine's own python3 and tools never see them)
#   MANIFEST  each library, the Debian package it came from, and the newest
#             glibc and libstdc++ symbol versions the bundle needs
#   payload.tar.xz, unpack.sh   lib/ and libexec/ travel compressed (55 MiB
#             unpacked, 15 MiB so): the first wrapper run, or env.sh, unpacks
#             them BESIDE the bundle, into bench/device/bundle.unpacked/ (also
#             ignored, and never carried), so the folder that travels stays
#             small however often it is used here (bench/device/unpack.sh)
#
# Paths inside are relative to the bundle, found from the wrapper's own place,
# so the repository may be copied anywhere.  bench/device/check_bundle.sh
# proves it runs with the system's Open MPI out of the way.
#
# usage: bash bench/device/pack.sh [--build DIR] [--no-smpi]
#   --build DIR  build folder, from the repository's root (default
#   build-device); --no-smpi: leave out the SMPI build (sparsim-smpi, smpirun)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="build-device"
smpi=1
while [ $# -gt 0 ]; do
    case "$1" in
    --build) [ $# -ge 2 ] || { echo "pack.sh: --build needs a folder" >&2; exit 2; }; build="$2"; shift 2 ;;
    --no-smpi) smpi=0; shift ;;
    *) echo "pack.sh: unknown argument '$1' (usage: pack.sh [--build DIR] [--no-smpi])" >&2; exit 2 ;;
    esac
done
out=bench/device/bundle
limit_mib=48
multiarch=x86_64-linux-gnu
sys=/usr/lib/$multiarch
# the C and C++ runtimes, left to the machine: glibc's own libraries and GCC's
# runtime, which every Linux with CUDA and PyTorch has (MANIFEST records the
# newest symbol versions needed; run.sh checks them there before anything runs)
ALLOWED='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libutil\.so\.1|libresolv\.so\.2|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$'
# plugins needing these are left out: fabrics a single machine has no use for
DENIED='libucp|libucs|libuct|libucm|libfabric|libibverbs|librdmacm|libpsm|libjvm|liboshmem'

for tool in cmake ldd dpkg strip readelf xz; do
    command -v "$tool" >/dev/null || { echo "pack.sh: '$tool' not found" >&2; exit 1; }
done
[ -x /usr/bin/orterun ] && [ -d "$sys/openmpi/lib/openmpi3" ] || {
    echo "pack.sh: Debian's Open MPI 4.1 (openmpi-bin, libopenmpi3) is not installed" >&2; exit 1; }

t0=$(date +%s)
step() { printf '== %s (%d s)\n' "$1" $(( $(date +%s) - t0 )) >&2; }

step "configure and build into $build"
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/pack-configure.log" 2>&1 || {
    tail -20 "$build/pack-configure.log" >&2; echo "pack.sh: configure failed" >&2; exit 1; }
grep -q "CUDA selection kernels for" "$build/pack-configure.log" || {
    echo "pack.sh: cmake found no nvcc (/usr/local/cuda/bin on PATH?): the bundle needs the CUDA kernels" >&2; exit 1; }
programs=(sparsim sparsim-mpi test_cuda gpu_bench raw_mpi_allgather)
cmake --build "$build" -j "$(nproc)" --target "${programs[@]}" >"$build/pack-build.log" 2>&1 || {
    tail -30 "$build/pack-build.log" >&2; echo "pack.sh: build failed" >&2; exit 1; }
if [ $smpi = 1 ]; then
    step "SMPI build (scripts/build-smpi.sh)"
    bash scripts/build-smpi.sh "$build" >"$build/pack-smpi.log" 2>&1 || {
        tail -20 "$build/pack-smpi.log" >&2; echo "pack.sh: SMPI build failed" >&2; exit 1; }
fi

step "lay out $out"
part="$out.part"
rm -rf "$part"
mkdir -p "$part"/{bin,libexec,lib/openmpi,lib/pmix,lib/hwloc,share/openmpi,share/pmix,etc}
for p in "${programs[@]}"; do
    src="$build/$p"
    [ -x "$src" ] || src="$build/tests/$p"
    cp "$src" "$part/libexec/$p"
done
cp /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$part/libexec/"
if [ $smpi = 1 ]; then
    cp "$build/sparsim-smpi" "$sys/simgrid/smpimain" "$sys/simgrid/smpireplaymain" "$part/libexec/"
fi
# Open MPI's plugins (libopenmpi3) and PMIx's (libpmix2), as Debian lists them
dropped=()
while read -r f; do
    # (ldd's output taken whole first: grep -q stopping early would fail ldd under pipefail)
    deps=$(ldd "$f")
    if grep -q -E "$DENIED" <<<"$deps"; then dropped+=("$(basename "$f" .so)"); continue; fi
    cp "$f" "$part/lib/openmpi/"
done < <(dpkg -L libopenmpi3 | grep -E '/openmpi3/mca_[a-z0-9_]+\.so$')
dpkg -L libpmix2 | grep -E '/lib/pmix/pmix_mca_[a-z0-9_]+\.so$' | xargs -r cp -t "$part/lib/pmix/"
dpkg -L openmpi-common | grep -E '/share/openmpi/help-.*\.txt$' | xargs -r cp -t "$part/share/openmpi/"
dpkg -L libpmix2 | grep -E '/share/pmix/help-.*\.txt$' | xargs -r cp -t "$part/share/pmix/"

# every library any of them loads, once, under its soname (ldd lists the whole
# closure of each); anything ldd cannot find is an error here, not there
step "collect libraries (ldd)"
declare -A seen=()
elfs=("$part"/libexec/* "$part"/lib/openmpi/*.so "$part"/lib/pmix/*.so)
for e in "${elfs[@]}"; do
    [ "$(head -c 4 "$e" | tr -d '\0')" = $'\x7fELF' ] || continue
    deps=$(ldd "$e")
    if grep -q "not found" <<<"$deps"; then
        echo "pack.sh: $e needs a library not installed here:" >&2; ldd "$e" | grep "not found" >&2; exit 1
    fi
    while read -r name path; do
        [[ "$name" =~ $ALLOWED ]] && continue
        [ -n "${seen[$name]:-}" ] && continue
        seen[$name]=$(readlink -f "$path")
    done < <(ldd "$e" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
done
for name in "${!seen[@]}"; do
    cp "${seen[$name]}" "$part/lib/$name"
done
# the C and C++ runtimes too, apart in lib/glibc: used only where the
# machine's glibc is older than the bundle needs (etc/bundle.sh), through the
# bundle's own loader, never on LD_LIBRARY_PATH
mkdir -p "$part/lib/glibc"
for name in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 \
            libresolv.so.2 libstdc++.so.6 libgcc_s.so.1; do
    f="/lib/$multiarch/$name"
    [ -e "$f" ] || f="/lib64/$name"
    cp "$(readlink -f "$f")" "$part/lib/glibc/$name"
done

step "strip"
strip --strip-unneeded "$part"/lib/*.so* "$part"/lib/openmpi/*.so "$part"/lib/pmix/*.so 2>/dev/null || true
strip "$part"/libexec/* 2>/dev/null || true

# the bundle's settings, read by every wrapper
cat >"$part/etc/bundle.sh" <<'EOF'
# etc/bundle.sh - sourced by the wrappers in bin/ with $b set to the bundle's
# root: the bundle's libraries first, and Open MPI and PMIx told where their
# plugins, help texts and settings are (OPAL_* and PMIX_* replace the paths
# that Debian's build compiled in); lib/ and libexec/ are unpacked beside the
# bundle, in BUNDLE.unpacked/ (unpack.sh), so the bundle itself stays small
u="$b.unpacked"
export LD_LIBRARY_PATH="$u/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$b" OPAL_EXEC_PREFIX="$b" OPAL_BINDIR="$b/bin" OPAL_LIBDIR="$u/lib" \
    OPAL_PKGLIBDIR="$u/lib/openmpi" OPAL_DATAROOTDIR="$b/share" OPAL_DATADIR="$b/share" \
    OPAL_PKGDATADIR="$b/share/openmpi" OPAL_SYSCONFDIR="$b/etc" OPAL_LIBEXECDIR="$u/libexec"
export PMIX_PREFIX="$b" PMIX_EXEC_PREFIX="$b" PMIX_LIBDIR="$u/lib" PMIX_PKGLIBDIR="$u/lib/pmix" \
    PMIX_DATADIR="$b/share" PMIX_PKGDATADIR="$b/share/pmix" PMIX_SYSCONFDIR="$b/etc" \
    PMIX_MCA_mca_base_component_path="$u/lib/pmix"
export OMPI_MCA_mca_base_component_path="$u/lib/openmpi" OMPI_MCA_mca_base_param_files="$b/etc/openmpi-mca-params.conf"
# a machine whose glibc is older than the bundle needs (etc/glibc-needed):
# the programs run under the bundle's own loader and C and C++ runtimes
# (lib/glibc), named on the loader's command line, never in LD_LIBRARY_PATH
# (the machine's own programs would load them); SPARSIM_BUNDLE_GLIBC=1 forces
# it (check_bundle.sh --glibc)
glibc_own="${SPARSIM_BUNDLE_GLIBC:-}"
if [ -z "$glibc_own" ]; then
    have="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
    need="$(cat "$b/etc/glibc-needed")"
    if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
        glibc_own=1
    fi
fi
# hwloc: only the plugins in the bundle (none: the core finds cores and caches)
export HWLOC_PLUGINS_PATH="$u/lib/hwloc"
# the machine runs everything as root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
cat >"$part/etc/openmpi-mca-params.conf" <<'EOF'
# the bundle's Open MPI: one machine, shared memory, no fabrics, no ssh
pml = ob1
btl = self,vader
plm = isolated
EOF
cat >"$part/env.sh" <<'EOF'
# . bench/device/bundle/env.sh - the bundle's programs first on PATH (mpirun,
# sparsim, sparsim-mpi, smpirun, ...); nothing else changes in this shell
SPARSIM_BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd -P)"
export SPARSIM_BUNDLE PATH="$SPARSIM_BUNDLE/bin:$PATH"
sh "$SPARSIM_BUNDLE/unpack.sh"
EOF
wrap() { # wrap NAME TARGET: bin/NAME runs libexec/TARGET with the bundle's settings
    cat >"$part/bin/$1" <<EOF
#!/bin/sh
# $1 from the bundle: its libraries and settings (etc/bundle.sh), then libexec/$2
b="\$(cd "\$(dirname "\$0")/.." && pwd -P)"
[ -d "\$b.unpacked/libexec" ] || sh "\$b/unpack.sh" || exit 1
. "\$b/etc/bundle.sh"
if [ -n "\$glibc_own" ]; then
    exec "\$u/lib/glibc/ld-linux-x86-64.so.2" --library-path "\$u/lib/glibc:\$LD_LIBRARY_PATH" "\$u/libexec/$2" "\$@"
fi
exec "\$u/libexec/$2" "\$@"
EOF
    chmod +x "$part/bin/$1"
}
for p in "${programs[@]}" orted ompi_info orterun; do wrap "$p" "$p"; done
wrap mpirun orterun
[ $smpi = 0 ] || { wrap smpimain smpimain; wrap smpireplaymain smpireplaymain; }
wrap mpiexec orterun
if [ $smpi = 1 ]; then
    # SimGrid's smpirun with its installed paths turned into the bundle's
    { sed -n '1p' /usr/bin/smpirun
      echo '# from SimGrid 3.32 (Debian), paths made relative by bench/device/pack.sh'
      echo 'b="$(cd "$(dirname "$0")/.." && pwd -P)"'
      sed -e '1d' \
          -e "s|^export LD_LIBRARY_PATH=\"$sys:$sys|export LD_LIBRARY_PATH=\"\$b.unpacked/lib|" \
          -e "s|$sys/simgrid/smpimain|\$b/bin/smpimain|" \
          -e "s|$sys/simgrid/smpireplaymain|\$b/bin/smpireplaymain|" \
          -e 's|/usr/bin/python3|python3|' /usr/bin/smpirun
    } >"$part/bin/smpirun"
    chmod +x "$part/bin/smpirun"
    if sed 1d "$part/bin/smpirun" | grep -n "/usr/\|/etc/" >&2; then
        echo "pack.sh: smpirun still names installed paths (above)" >&2; exit 1
    fi
fi

step "manifest"
{
    echo "# bench/device/bundle: built $(date -u '+%Y-%m-%d %H:%M UTC') from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "# on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
    echo "# plugins left out (they need fabrics, Java or OpenSHMEM): ${dropped[*]:-none}"
    echo "# left to the machine: $(echo "$ALLOWED" | tr -d '^$()\\' | tr '|' ' ')"
    vers=$(find "$part" -type f \( -path '*/lib/*' -o -path '*/libexec/*' \) -not -path '*/lib/glibc/*' \
           -exec readelf -V --wide {} + 2>/dev/null |
           grep -o -E 'GLIBC(XX)?_[0-9.]+' | sort -u -V)
    echo "needs $(echo "$vers" | grep '^GLIBC_' | tail -1) $(echo "$vers" | grep '^GLIBCXX_' | tail -1)"
    echo "$vers" | grep '^GLIBC_' | tail -1 | cut -d_ -f2 >"$part/etc/glibc-needed"
    echo "# lib/glibc/: libc6 $(dpkg-query -W -f='${Version}' libc6), libstdc++6 $(dpkg-query -W -f='${Version}' libstdc++6) (used only where the machine's glibc is older)"
    for name in $(printf '%s\n' "${!seen[@]}" | sort); do
        real="${seen[$name]}"
        pkg=""
        # dpkg knows a file by the path its package installed (/lib or /usr/lib)
        for p in "$real" "${real/#\/usr\/lib\//\/lib\/}" "/lib/$multiarch/$name" "$sys/$name"; do
            [ -n "$pkg" ] || pkg=$(dpkg -S "$p" 2>/dev/null | cut -d: -f1 | head -1 || true)
        done
        echo "lib/$name ${pkg:-?} $(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)"
    done
    echo "lib/openmpi/ libopenmpi3 $(dpkg-query -W -f='${Version}' libopenmpi3)"
    echo "lib/pmix/ libpmix2 $(dpkg-query -W -f='${Version}' libpmix2)"
    echo "libexec/orterun,orted,ompi_info openmpi-bin $(dpkg-query -W -f='${Version}' openmpi-bin)"
    [ $smpi = 0 ] || echo "libexec/smpimain,bin/smpirun libsimgrid-dev $(dpkg-query -W -f='${Version}' libsimgrid-dev)"
} >"$part/MANIFEST"

# lib/ and libexec/ travel as one xz archive (about 61 MiB, three quarters of
# it SimGrid and the ns-3 libraries it links, become about 15 MiB), put back
# in place by unpack.sh on first use
step "compress lib/ and libexec/"
full=$(du -sb "$part" | cut -f1)
tar -C "$part" -cf - lib libexec | xz -6 -T0 >"$part/payload.tar.xz"
rm -rf "${part:?}/lib" "${part:?}/libexec"
cp bench/device/unpack.sh "$part/unpack.sh"
chmod +x "$part/unpack.sh"

size=$(du -sb "$part" | cut -f1)
if [ "$size" -gt $((limit_mib * 1048576)) ]; then
    echo "pack.sh: the bundle is $((size / 1048576)) MiB, over its limit of $limit_mib MiB" >&2
    rm -rf "$part"; exit 1
fi
rm -rf "$out" "$out.unpacked"
mv "$part" "$out"
step "done"
mib() { awk -v s="$1" 'BEGIN { printf "%.1f MiB", s / 1048576 }'; }
printf 'bundle: %s, %s as it travels (%s unpacked); %s\n' "$out" "$(mib "$size")" "$(mib "$full")" \
    "$(grep '^needs' "$out/MANIFEST")"
