#!/usr/bin/env bash
# Per-kernel device times of one warm call of each evaluator benchmark (device tool, after scripts/gpu-check.sh
# has built build-gpu): Nsight Compute with --profile-from-start off sees only the call that
# bench/gpu/gpu_bench_support.hpp's profile_once brackets. Writes $OUT/profile.csv (raw) and prints, per
# benchmark, each kernel's duration, its share of DRAM and SM peak, and the sum.
#
# Environment: OUT, CERIUM_BUILD_DIR (default build-gpu), PROFILE_FILTER (a --benchmark_filter, default the
# dnum 3 eager multiply + relinearize + rescale and rotate).
set -uo pipefail
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${CERIUM_BUILD_DIR:-$repo_root/build-gpu}
out=${OUT:-$build_dir/out}
mkdir -p "$out"
[[ -x /usr/local/cuda/bin/ncu ]] && export PATH=/usr/local/cuda/bin:$PATH
filter=${PROFILE_FILTER:-'(multiply_relinearize_rescale|rotate)_gpu/dnum:3/graph:0'}
CERIUM_BENCH_PROFILE=1 ncu --profile-from-start off --clock-control none --csv --print-units base \
  --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
  "$build_dir/bench/cerium_bench_gpu" --benchmark_filter="$filter" --benchmark_repetitions=1 \
  >"$out/profile.csv" 2>"$out/profile.err"
echo "ncu exit: $?"
python3 - "$out/profile.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, body = rows[0], rows[1:]
col = {name: i for i, name in enumerate(head)}
kernels = collections.OrderedDict()
for r in body:
    key = (r[col["ID"]], r[col["Kernel Name"]][:70])
    kernels.setdefault(key, {})[r[col["Metric Name"]]] = r[col["Metric Value"]].replace(",", "")
total = 0.0
print(f"{'id':>4} {'kernel':<70} {'us':>8} {'dram%':>6} {'sm%':>6} {'warps%':>6} {'grid':>7} {'regs':>4}")
for (i, name), m in kernels.items():
    us = float(m.get("gpu__time_duration.sum", "nan")) / 1e3
    total += us
    print(f"{i:>4} {name:<70} {us:>8.2f} {float(m.get('dram__throughput.avg.pct_of_peak_sustained_elapsed','nan')):>6.1f} "
          f"{float(m.get('sm__throughput.avg.pct_of_peak_sustained_elapsed','nan')):>6.1f} "
          f"{float(m.get('sm__warps_active.avg.pct_of_peak_sustained_active','nan')):>6.1f} "
          f"{m.get('launch__grid_size','')[:7]:>7} {m.get('launch__registers_per_thread',''):>4}")
print(f"sum of kernel durations: {total:.1f} us over {len(kernels)} kernels")
PY

# PROFILE_DETAIL=<kernel regex>: Nsight Compute's full sections (scheduler, warp states, instruction mix, memory)
# for the first launch of that kernel in the profiled call (PROFILE_DETAIL_COUNT: the first that many), to
# $OUT/profile_detail.txt (SourceCounters names the instructions where warps stall; PROFILE_DETAIL_ARGS adds
# ncu options, e.g. --print-details all).
if [[ -n ${PROFILE_DETAIL:-} ]]; then
  CERIUM_BENCH_PROFILE=1 ncu --profile-from-start off --clock-control none --kernel-name "regex:$PROFILE_DETAIL" \
    --launch-count "${PROFILE_DETAIL_COUNT:-1}" --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section SchedulerStats \
    --section WarpStateStats --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis \
    --section SourceCounters ${PROFILE_DETAIL_ARGS:-} \
    "$build_dir/bench/cerium_bench_gpu" --benchmark_filter="$filter" --benchmark_repetitions=1 \
    >"$out/profile_detail.txt" 2>&1
  echo "ncu detail exit: $?"
fi
