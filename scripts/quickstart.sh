#!/usr/bin/env bash
# The first command for a new user: installs what is missing, builds Cerium and runs the main example,
# on the GPU when there is one, else on the CPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/setup-debian.sh"
mkdir -p "$build_dir"
configure_and_build --target cerium_example_polynomial_multiply
"$build_dir/examples/cerium_example_polynomial_multiply"
