#!/usr/bin/env bash
# Builds and runs the CPU benchmarks; JSON goes to $OUT (or build/bench) for bench/RESULTS.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out=${OUT:-$build_dir/bench}
mkdir -p "$build_dir" "$out"
CERIUM_BUILD_TYPE=Release configure_and_build --target cerium_bench_cpu
"$build_dir/bench/cerium_bench_cpu" --benchmark_format=console --benchmark_out="$out/bench_cpu.json" \
  --benchmark_out_format=json "$@"
