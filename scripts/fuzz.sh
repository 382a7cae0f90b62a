#!/usr/bin/env bash
# Builds the io fuzzers (libFuzzer + ASan + UBSan, clang++) in their own build directory, writes the seed corpus
# and runs every harness for a bounded time, printing how many inputs each ran. Not part of CI.
#
# Usage: scripts/fuzz.sh [seconds per harness (default 30)] [harness names...]
# Environment: CERIUM_FUZZ_BUILD_DIR (default build-fuzz), CXX (default clang++), CERIUM_FUZZ_JOBS (parallel
# build jobs, default nproc).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
seconds=${1:-30}
shift || true
fuzz_build=${CERIUM_FUZZ_BUILD_DIR:-$repo_root/build-fuzz}
harnesses=("$@")
if [[ ${#harnesses[@]} -eq 0 ]]; then
  harnesses=(parameters plaintext ciphertext secret_key public_key relinearization_key galois_keys)
fi

mkdir -p "$fuzz_build"
cmake -S "$repo_root/tests/fuzz" -B "$fuzz_build" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCERIUM_BUILD_FUZZERS=ON >"$fuzz_build/configure.log" 2>&1 ||
  { cat "$fuzz_build/configure.log"; exit 1; }
targets=(make_fuzz_corpus)
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$fuzz_build" -j "${CERIUM_FUZZ_JOBS:-$jobs}" --target "${targets[@]}"

corpus=$fuzz_build/corpus
"$fuzz_build/make_fuzz_corpus" "$corpus/seed"
status=0
for h in "${harnesses[@]}"; do
  mkdir -p "$corpus/$h" "$fuzz_build/findings/$h"
  log=$fuzz_build/fuzz_$h.log
  # New inputs go to corpus/<h> (kept between runs); crashes, leaks and timeouts to findings/<h>.
  if "$fuzz_build/fuzz_$h" "$corpus/$h" "$corpus/seed/$h" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
      -artifact_prefix="$fuzz_build/findings/$h/" >"$log" 2>&1; then
    result=ok
  else
    result="FINDING (see $log and $fuzz_build/findings/$h/)"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz_$h: $runs runs in ${seconds}s, $cov: $result"
done
exit $status
