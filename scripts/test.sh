#!/usr/bin/env bash
# The test command: installs what is missing, builds everything and runs the test suite with ctest.
# Tests labelled gpu run only where a GPU is present. scripts/fetch-minilm.sh brings the pretrained MiniLM weights
# for the BERT test first (CERIUM_FETCH_MINILM=0: not).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/setup-debian.sh"
mkdir -p "$build_dir"
configure_and_build
# The real all-MiniLM-L6-v2 weights for the BERT reference's test (about 10 s; skipped with CERIUM_FETCH_MINILM=0,
# and the test skips when they cannot be had).
if [[ ${CERIUM_FETCH_MINILM:-1} != 0 ]]; then
  minilm_dir=${CERIUM_MINILM_DIR:-$build_dir/minilm}
  "$repo_root/scripts/fetch-minilm.sh" "$minilm_dir"
  if [[ -f $minilm_dir/minilm_encoder.crwt ]]; then export CERIUM_MINILM_DIR=$minilm_dir; fi
fi
ctest_args=(--test-dir "$build_dir" --output-on-failure -j "$jobs")
if ! has_gpu; then
  echo "cerium: no GPU here, skipping the tests labelled gpu"
  ctest_args+=(-LE gpu)
fi
ctest "${ctest_args[@]}" "$@"
