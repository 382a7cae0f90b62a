#!/usr/bin/env bash
# A/B of kernel variants in one device-tool call (after scripts/gpu-check.sh has built build-gpu): each folder
# $AB_DIR/<name>/ holds files laid out like the repository (for example kernels/basis_conversion.cu); for each
# variant in name order they replace the tree's files, the GPU benchmark is rebuilt (one object and the link) and
# run, optionally profiled per kernel, and the tree's own files come back. The working tree's version runs first,
# as "base". Variant folders are scratch: untracked, never committed.
#
# Environment: OUT, CERIUM_BUILD_DIR (default build-gpu), AB_DIR (required), AB_BENCH_FILTER (a
# --benchmark_filter), AB_PROFILE=1 (also scripts/gpu-profile.sh's per-kernel table for PROFILE_FILTER).
set -uo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build-gpu}
out=${OUT:-$build_dir/out}
ab_dir=${AB_DIR:?AB_DIR names the folder of variants}
filter=${AB_BENCH_FILTER:-'(multiply_rescale|rotate|mod_up)_gpu/dnum:3/graph:1'}
mkdir -p "$out"
cd "$repo_root" || exit 1

run_variant() {  # NAME
  local name=$1
  echo "=== variant $name"
  if ! cmake --build "$build_dir" --target cerium_bench_gpu -j "$(nproc)" >"$out/ab_${name}_build.log" 2>&1; then
    echo "build failed:"; grep -E "error" "$out/ab_${name}_build.log" | head -20; return 1
  fi
  "$build_dir/bench/cerium_bench_gpu" --benchmark_filter="$filter" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_format=console \
    --benchmark_out="$out/ab_${name}.json" --benchmark_out_format=json >"$out/ab_${name}_bench.log" 2>&1
  python3 - "$out/ab_${name}.json" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(f"  {b['run_name']:<52} {b.get('us', float('nan')):>9.2f} us  floor x {b.get('floor_ratio', float('nan')):.2f}")
PY
  if [[ ${AB_PROFILE:-0} == 1 ]]; then
    OUT=$out/ab_$name timeout -k 5 120 "$repo_root/scripts/gpu-profile.sh" | grep -E "conversion|ntt_tile|inner|sum of"
  fi
}

run_variant base
for variant in "$ab_dir"/*/; do
  name=$(basename "$variant")
  backup=$(mktemp -d)
  mapfile -t files < <(cd "$variant" && find . -type f | sed 's|^\./||')
  for f in "${files[@]}"; do
    mkdir -p "$backup/$(dirname "$f")"
    cp -p "$f" "$backup/$f" 2>/dev/null || true
    cp "$variant/$f" "$f"
  done
  run_variant "$name"
  for f in "${files[@]}"; do
    if [[ -f $backup/$f ]]; then cp -p "$backup/$f" "$f"; else rm -f "$f"; fi
  done
  rm -rf "$backup"
done
# Leave the build matching the tree.
cmake --build "$build_dir" --target cerium_bench_gpu -j "$(nproc)" >/dev/null 2>&1
