#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the whole test suite; then again with AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
(cd build && ctest --output-on-failure)
echo "== again under ASan + UBSan"
bash scripts/build.sh build-asan -DSPARSIM_SANITIZE=ON
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure)
