#!/bin/sh
# unpack.sh - copied into the bundle by pack.sh: puts the bundle's lib/ and
# libexec/ in place from payload.tar.xz, once.  The wrappers in bin/ and
# env.sh call it; several at once are safe (each unpacks into a folder of its
# own, and the first rename wins).  Without xz it unpacks with python3.
set -eu
b="$(cd "$(dirname "$0")" && pwd -P)"
[ -d "$b/lib" ] && [ -d "$b/libexec" ] && exit 0
[ -f "$b/payload.tar.xz" ] || { echo "unpack.sh: $b has no payload.tar.xz (run bench/device/pack.sh)" >&2; exit 1; }
tmp="$(mktemp -d "$b/.unpack.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if command -v xz >/dev/null 2>&1; then
    tar -xJf "$b/payload.tar.xz" -C "$tmp"
else
    python3 -c 'import sys, tarfile
kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' "$b/payload.tar.xz" "$tmp"
fi
for d in lib libexec; do
    mv -T "$tmp/$d" "$b/$d" 2>/dev/null || [ -d "$b/$d" ] || { echo "unpack.sh: cannot put $d in place in $b" >&2; exit 1; }
done
