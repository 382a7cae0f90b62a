#!/usr/bin/env bash
# The first command for a new user: installs what is missing, builds Cerium and runs the main examples: the CKKS
# quickstart (encrypt, evaluate a polynomial and a rotation, decrypt, report precision), a bootstrap (toy
# parameters: seconds on a CPU; pass --n16 to the example for the 128-bit N = 2^16 preset) and the RNS polynomial
# product through the NTT, each on the GPU when there is one, else on the CPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$repo_root/scripts/setup-debian.sh"
mkdir -p "$build_dir"
configure_and_build --target cerium_example_quickstart cerium_example_bootstrap cerium_example_polynomial_multiply
"$build_dir/examples/cerium_example_quickstart"
echo
"$build_dir/examples/cerium_example_bootstrap"
echo
"$build_dir/examples/cerium_example_polynomial_multiply"
