#!/bin/sh
# unpack.sh - copied into the bundle by pack.sh: unpacks payload.tar.xz (the
# bundle's lib/ and libexec/) BESIDE the bundle, into BUNDLE.unpacked/, so
# that the folder which travels keeps only the archive.  The wrappers in bin/
# and env.sh call it; it does the work once per payload (a stamp holds the
# archive's checksum), and several at once are safe: each unpacks into a
# folder of its own and the first rename wins.  Without xz it uses python3.
set -eu
b="$(cd "$(dirname "$0")" && pwd -P)"
u="$b.unpacked"
[ -f "$b/payload.tar.xz" ] || { echo "unpack.sh: $b has no payload.tar.xz (run bench/device/pack.sh)" >&2; exit 1; }
id="$(cksum <"$b/payload.tar.xz")"
[ -d "$u/lib" ] && [ -d "$u/libexec" ] && [ "$(cat "$u/.payload" 2>/dev/null)" = "$id" ] && exit 0
mkdir -p "$u"
if [ -f "$u/.payload" ] && [ "$(cat "$u/.payload")" != "$id" ]; then
    rm -rf "${u:?}/lib" "${u:?}/libexec" "${u:?}/.payload"   # another payload's (pack.sh ran again)
fi
tmp="$(mktemp -d "$u/.unpack.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if command -v xz >/dev/null 2>&1; then
    tar -xJf "$b/payload.tar.xz" -C "$tmp"
else
    python3 -c 'import sys, tarfile
kw = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **kw)' "$b/payload.tar.xz" "$tmp"
fi
for d in lib libexec; do
    mv -T "$tmp/$d" "$u/$d" 2>/dev/null || [ -d "$u/$d" ] || { echo "unpack.sh: cannot put $d in place in $u" >&2; exit 1; }
done
echo "$id" >"$u/.payload"
