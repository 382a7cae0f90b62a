#include "cerium/core/simd.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "cerium/core/check.hpp"

namespace cerium {

namespace {

SimdLevel detect() {
#if CERIUM_HAS_SIMD_TARGETS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma")) {
    return SimdLevel::avx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma")) {
    return SimdLevel::avx2;
  }
#endif
  return SimdLevel::baseline;
}

SimdLevel from_environment(SimdLevel supported) {
  const char* env = std::getenv("CERIUM_SIMD");
  if (env == nullptr || *env == '\0') return supported;
  for (const SimdLevel level : {SimdLevel::baseline, SimdLevel::avx2, SimdLevel::avx512}) {
    if (to_string(level) == env) return level <= supported ? level : supported;
  }
  throw InvalidArgument(fmt::format("CERIUM_SIMD={}: use baseline, avx2 or avx512 (or leave it unset)", env));
}

std::atomic<int>& chosen() {
  static std::atomic<int> level{static_cast<int>(from_environment(supported_simd_level()))};
  return level;
}

}  // namespace

SimdLevel supported_simd_level() {
  static const SimdLevel level = detect();
  return level;
}

SimdLevel simd_level() { return static_cast<SimdLevel>(chosen().load(std::memory_order_relaxed)); }

void set_simd_level(SimdLevel level) {
  require<UnsupportedError>(level <= supported_simd_level(),
                            "set_simd_level({}): this CPU (or build) runs at most {}", to_string(level),
                            to_string(supported_simd_level()));
  chosen().store(static_cast<int>(level), std::memory_order_relaxed);
}

std::string_view to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::avx512: return "avx512";
    case SimdLevel::avx2: return "avx2";
    default: return "baseline";
  }
}

}  // namespace cerium
