#!/usr/bin/env bash
# Installs the Debian 12 packages Cerium builds with, when they are missing. Nothing else is downloaded.
# The CUDA Toolkit is not a Debian package: when /usr/local/cuda exists it is used, otherwise Cerium builds
# its CPU backend only.
#
# Usage: setup-debian.sh [--sanitizers] [--docs]
#   --sanitizers  also clang 14 and its runtimes (libFuzzer, ASan, UBSan, TSan live in libclang-rt-14-dev, which
#                 clang-14 only recommends) and Ninja, for scripts/sanitize.sh and scripts/fuzz.sh
#   --docs        also Doxygen and Graphviz (the API reference, scripts/docs.sh) and Matplotlib
#                 (scripts/plot-bench.py)
set -euo pipefail

packages=(build-essential cmake catch2 libfmt-dev libbenchmark-dev libgmp-dev zlib1g-dev libopenmpi-dev openmpi-bin)
for option in "$@"; do
  case $option in
    --sanitizers) packages+=(clang-14 libclang-rt-14-dev ninja-build) ;;
    --docs) packages+=(doxygen graphviz python3-matplotlib) ;;
    *) echo "usage: $0 [--sanitizers] [--docs]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "cerium: installing ${missing[*]}"
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "cerium: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
