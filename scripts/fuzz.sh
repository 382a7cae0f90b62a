#!/usr/bin/env bash
# Builds the io fuzzers (libFuzzer + ASan + UBSan, clang) in their own build directory, writes the seed corpus
# and runs every harness (tests/fuzz/fuzz_*.cpp) for a bounded time, printing how many inputs each ran. CI runs
# it through scripts/sanitize.sh. Exits non-zero when a harness finds a crash, a leak, a timeout or an
# allocation beyond the limit; the input is left in build-fuzz/findings/<harness>/.
#
# Each run starts from the seed corpus, the inputs earlier runs kept (build-fuzz/corpus/<harness>) and the
# committed regression inputs (tests/fuzz/regressions/<harness>/: inputs that once crashed, replayed first).
#
# Usage: scripts/fuzz.sh [seconds per harness (default 30)] [harness names...]
# Environment: CERIUM_FUZZ_BUILD_DIR (default build-fuzz), CERIUM_CLANG (default clang++-14, else clang++),
# CERIUM_FUZZ_JOBS (parallel build jobs and harnesses run at once, default nproc).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
seconds=${1:-30}
shift || true
fuzz_build=${CERIUM_FUZZ_BUILD_DIR:-$repo_root/build-fuzz}
fuzz_jobs=${CERIUM_FUZZ_JOBS:-$jobs}
clang=${CERIUM_CLANG:-$(command -v clang++-14 || echo clang++)}
harnesses=("$@")
targets=(make_fuzz_corpus)
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
if [[ ${#harnesses[@]} -eq 0 ]]; then
  for source in "$repo_root"/tests/fuzz/fuzz_*.cpp; do
    name=$(basename "$source" .cpp)
    harnesses+=("${name#fuzz_}")
  done
  targets=(all)  # one goal: Makefiles build several --target goals one after the other
fi

mkdir -p "$fuzz_build"
generator="Unix Makefiles"
command -v ninja >/dev/null 2>&1 && [[ ! -f $fuzz_build/Makefile ]] && generator=Ninja
cmake -S "$repo_root/tests/fuzz" -B "$fuzz_build" -G "$generator" -DCMAKE_CXX_COMPILER="$clang" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  -DCERIUM_BUILD_FUZZERS=ON >"$fuzz_build/configure.log" 2>&1 ||
  { cat "$fuzz_build/configure.log"; exit 1; }
cmake --build "$fuzz_build" -j "$fuzz_jobs" --target "${targets[@]}"

corpus=$fuzz_build/corpus
"$fuzz_build/make_fuzz_corpus" "$corpus/seed"

# fuzz_one HARNESS: one bounded run; its log is build-fuzz/fuzz_<harness>.log, its status build-fuzz/fuzz_<h>.rc.
fuzz_one() {
  local h=$1 inputs=()
  mkdir -p "$corpus/$h" "$fuzz_build/findings/$h"
  inputs=("$corpus/$h" "$corpus/seed/$h")
  [[ -d $repo_root/tests/fuzz/regressions/$h ]] && inputs+=("$repo_root/tests/fuzz/regressions/$h")
  # New inputs go to corpus/<h> (the first directory, kept between runs); crashes, leaks and timeouts to
  # findings/<h>.
  local rc=0
  "$fuzz_build/fuzz_$h" "${inputs[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$fuzz_build/findings/$h/" \
    >"$fuzz_build/fuzz_$h.log" 2>&1 || rc=$?
  echo "$rc" >"$fuzz_build/fuzz_$h.rc"
}

# libFuzzer runs on one core: run as many harnesses at once as there are jobs.
running=0
for h in "${harnesses[@]}"; do
  if ((running >= fuzz_jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait

status=0
for h in "${harnesses[@]}"; do
  log=$fuzz_build/fuzz_$h.log
  if [[ $(cat "$fuzz_build/fuzz_$h.rc") == 0 ]]; then
    result=ok
  else
    result="FINDING (see $log and $fuzz_build/findings/$h/)"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz_$h: $runs inputs executed in ${seconds}s, $cov: $result"
  [[ $result == ok ]] || tail -40 "$log"
done
exit $status
