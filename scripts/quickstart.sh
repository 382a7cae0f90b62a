#!/usr/bin/env bash
# The first command for a new user: installs what is missing, builds Cerium and runs the main examples: the CKKS
# quickstart (encrypt, evaluate a polynomial and a rotation, decrypt, report precision) and the RNS polynomial
# product through the NTT, on the GPU as well when there is one.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/setup-debian.sh"
mkdir -p "$build_dir"
configure_and_build --target cerium_example_quickstart cerium_example_polynomial_multiply
"$build_dir/examples/cerium_example_quickstart"
echo
"$build_dir/examples/cerium_example_polynomial_multiply"
