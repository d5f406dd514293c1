#!/usr/bin/env bash
# Installs what sparsim needs from Debian 12's packages, only what is missing.
set -euo pipefail

packages=(build-essential cmake pkg-config libsimgrid-dev libgsl-dev libcjson-dev libcriterion-dev
          libopenmpi-dev openmpi-bin
          clang libclang-rt-14-dev
          slurm-wlm munge
          python3 python3-numpy python3-torch python3-sklearn python3-matplotlib python3-pandas python3-nbformat python3-nbconvert
          python3-ipykernel jupyter-nbconvert jupyter-client)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
