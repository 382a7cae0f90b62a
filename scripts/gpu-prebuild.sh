#!/usr/bin/env bash
# Builds the GPU check's programs here (Release, sm_90, in build-gpu-local) and packs them, stripped, with the
# shared libraries they need beyond libc and CUDA's runtime, into build-gpu-prebuilt/programs.tar.xz (about
# 10 MB). The device tool carries that folder and scripts/gpu-check.sh runs the programs as they are
# (GPU_PREBUILT=build-gpu-prebuilt/programs.tar.xz), so the GPU machine's minutes go to the GPU, not to the
# compiler. Needs nvcc here; GPU code compiles without a GPU.
#
# Usage: scripts/gpu-prebuild.sh            (then carry build-gpu-prebuilt)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
command -v nvcc >/dev/null 2>&1 || { echo "gpu-prebuild: no nvcc here (install the CUDA Toolkit)" >&2; exit 1; }
local_build=$repo_root/build-gpu-local
out_dir=$repo_root/build-gpu-prebuilt
targets=(cerium_test_gpu cerium_bench_gpu cerium_example_bootstrap cerium_example_deep_program cerium_example_resnet20
         cerium_example_minilm cerium_example_bert_base cerium_example_llama cerium_example_train_mlp)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null 2>&1 && [[ ! -f $local_build/Makefile ]] && generator=(-G Ninja)
cmake -S "$repo_root" -B "$local_build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCERIUM_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 "${launcher[@]}" >"$local_build.configure.log" 2>&1 ||
  { cat "$local_build.configure.log"; exit 1; }
cmake --build "$local_build" -j "$jobs" --target "${targets[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tests" "$stage/bench" "$stage/examples" "$stage/lib"
strip -o "$stage/tests/cerium_test_gpu" "$local_build/tests/cerium_test_gpu"
strip -o "$stage/bench/cerium_bench_gpu" "$local_build/bench/cerium_bench_gpu"
for example in bootstrap deep_program resnet20 minilm bert_base llama train_mlp; do
  strip -o "$stage/examples/cerium_example_$example" "$local_build/examples/cerium_example_$example"
done
# fmt and Google Benchmark as linked here, in case the GPU machine lacks them (gpu-check.sh puts lib/ last on
# the library path).
for program in "$stage"/tests/* "$stage"/bench/* "$stage"/examples/*; do
  ldd "$program" | awk '/=> \// {print $3}' | grep -E 'libfmt|libbenchmark|libgmp' || true
done | sort -u | xargs -r cp -L -t "$stage/lib"
git -C "$repo_root" rev-parse HEAD >"$stage/COMMIT"
git -C "$repo_root" status --short >"$stage/DIRTY"
mkdir -p "$out_dir"
tar cJf "$out_dir/programs.tar.xz" -C "$stage" .
echo "gpu-prebuild: $(du -h "$out_dir/programs.tar.xz" | cut -f1) in $out_dir/programs.tar.xz" \
  "($(cat "$stage/COMMIT" | cut -c1-10)$([[ -s $stage/DIRTY ]] && echo ', uncommitted changes'))"
