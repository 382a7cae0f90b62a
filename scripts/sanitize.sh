#!/usr/bin/env bash
# CI's sanitizer and fuzzing stages, run by .ci/run after scripts/test.sh. Each builds with clang 14 (installed
# by setup-debian.sh --sanitizers) in a build directory of its own, CUDA off:
#   fuzz  every libFuzzer harness of tests/fuzz (ASan + UBSan) for CERIUM_FUZZ_SECONDS (default 10: CI's 30 minutes) each, two
#         at a time on two cores, from the seed corpus and the committed regression inputs (scripts/fuzz.sh,
#         build-fuzz/)
#   asan  every CPU test suite (tests/unit/*) under AddressSanitizer and UndefinedBehaviorSanitizer, -O1, every
#         report fatal; the tests tagged [slow] (end-to-end encrypted models) and [heavy] (over 20 s under the
#         sanitizers, their code covered by smaller tests of the same suite) left to scripts/test.sh (build-asan/)
#   tsan  the multi-threaded test tests/unit/ckks/test_threads.cpp under ThreadSanitizer; tests/tsan builds the
#         library and that test only (build-tsan/)
# Left to scripts/test.sh: the header check, the install check and the compile-fail tests (nothing runs there).
# Every stage runs even when an earlier one fails; the script fails when any did and ends with each stage's time.
#
# Usage: scripts/sanitize.sh [fuzz] [asan] [tsan]   (default: all three)
# Environment: CERIUM_FUZZ_SECONDS, CERIUM_CLANG (default clang++-14, else clang++).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
stages=("$@")
((${#stages[@]})) || stages=(fuzz asan tsan)
"$repo_root/scripts/setup-debian.sh" --sanitizers
export CERIUM_CLANG=${CERIUM_CLANG:-$(command -v clang++-14 || echo clang++)}

# Ninja builds several targets at once (Makefiles build --target goals one after the other); an existing
# Makefile build directory keeps its generator.
generator_for() {
  if command -v ninja >/dev/null 2>&1 && [[ ! -f $1/Makefile ]]; then echo Ninja; else echo "Unix Makefiles"; fi
}

# sanitized_build SOURCE_DIR BUILD_DIR FLAGS TARGET...: configures with clang and FLAGS on every compile and
# link (-O1, debug information, assertions on), then builds only the targets. Without OpenMP: its runtime is not
# instrumented (ThreadSanitizer would report its own synchronization), and the words are the same on one thread.
# Line tables only: the sanitizers' reports keep file and line, and the builds take a third less time.
sanitized_build() {
  local source=$1 dir=$2 flags=$3
  shift 3
  mkdir -p "$dir"
  cmake -S "$source" -B "$dir" -G "$(generator_for "$dir")" -DCMAKE_CXX_COMPILER="$CERIUM_CLANG" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
    -DCMAKE_CXX_FLAGS="-O1 -fno-omit-frame-pointer $flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCERIUM_CUDA=OFF \
    -DCERIUM_BUILD_BENCH=OFF -DCERIUM_BUILD_EXAMPLES=OFF -DCERIUM_OPENMP=OFF "-DCERIUM_TEST_SPEC=~[slow]~[heavy]" \
    >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs" --target "$@"
}

stage_fuzz() { "$repo_root/scripts/fuzz.sh" "${CERIUM_FUZZ_SECONDS:-10}"; }

stage_asan() {
  local dir=$repo_root/build-asan suites=() targets=()
  for d in "$repo_root"/tests/unit/*/; do suites+=("$(basename "$d")"); done
  for s in "${suites[@]}"; do targets+=("cerium_test_$s"); done
  sanitized_build "$repo_root" "$dir" "-fsanitize=address,undefined -fno-sanitize-recover=all" "${targets[@]}"
  # The buffer tests ask for 2^62 bytes on purpose and expect OutOfMemoryError, not ASan's abort.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:check_initialization_order=1:strict_init_order=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" -R "^($(IFS='|'; echo "${suites[*]}"))\$"
}

stage_tsan() {
  local dir=$repo_root/build-tsan
  sanitized_build "$repo_root/tests/tsan" "$dir" "-fsanitize=thread" cerium_test_threads
  # A few runs: which thread builds a cached table first, and so which accesses TSan sees, varies.
  for run in 1 2 3; do
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$dir/cerium_test_threads" --order rand
  done
}

summary=()
failed=0
exec 3>&1 4>&2
for stage in "${stages[@]}"; do
  echo "=== sanitize: $stage"
  # A subshell with errexit of its own, so that the first failing command ends the stage, not the script; bash's
  # time gives its wall and CPU seconds (CPU: what the budget of a shared or small CI machine depends on).
  set +e
  TIMEFORMAT='%0R %0U %0S'
  took=$({ time { (set -e; "stage_$stage") 1>&3 2>&4; }; } 2>&1)
  rc=$?
  set -e
  read -r wall user sys <<<"$took"
  if ((rc == 0)); then result=ok; else result="FAILED (rc $rc)"; failed=1; fi
  summary+=("$stage: $result in ${wall}s (CPU ${user}s user + ${sys}s sys)")
  echo "=== sanitize: ${summary[-1]}"
done
printf '=== sanitize summary\n'
printf '  %s\n' "${summary[@]}"
exit $failed
