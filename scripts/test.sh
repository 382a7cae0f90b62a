#!/usr/bin/env bash
# The test command: installs what is missing, builds everything and runs the test suite with ctest.
# Tests labelled gpu run only where a GPU is present.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/setup-debian.sh"
mkdir -p "$build_dir"
configure_and_build
ctest_args=(--test-dir "$build_dir" --output-on-failure -j "$jobs")
if ! has_gpu; then
  echo "cerium: no GPU here, skipping the tests labelled gpu"
  ctest_args+=(-LE gpu)
fi
ctest "${ctest_args[@]}" "$@"
