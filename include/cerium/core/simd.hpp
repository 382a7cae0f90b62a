#pragma once
// The x86-64 vector instructions the CPU backend's hot loops use. Each such loop is one inline body compiled three
// times (AVX-512, AVX2, the x86-64 baseline's SSE2: CERIUM_SIMD_VARIANTS), and each call runs the widest the CPU
// has, so one binary runs on any x86-64. The words never depend on the choice: the loops are integer arithmetic,
// the same operations in every lane. Other architectures (and nvcc's passes) compile the baseline only.

#include <string_view>

namespace cerium {

// The instruction sets of the variants, narrowest first.
enum class SimdLevel { baseline, avx2, avx512 };

// The level the loops use now: supported_simd_level(), or what set_simd_level or the environment variable
// CERIUM_SIMD (baseline, avx2 or avx512, read once) chose below it.
SimdLevel simd_level();
// The widest level this CPU and this build run.
SimdLevel supported_simd_level();
// For every thread (tests and benchmarks compare the levels): UnsupportedError above supported_simd_level().
void set_simd_level(SimdLevel level);
std::string_view to_string(SimdLevel level);

}  // namespace cerium

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
// 1 where the compiler builds x86-64 variants (GCC or Clang on x86-64, outside nvcc), else 0.
#define CERIUM_HAS_SIMD_TARGETS 1
// Compiles the function it marks for x86-64-v3 (AVX2, BMI2, FMA).
#define CERIUM_TARGET_AVX2 __attribute__((target("avx2,bmi,bmi2,fma,lzcnt,movbe,popcnt")))
// Compiles the function it marks for x86-64-v4 (AVX-512 F, BW, CD, DQ, VL).
#define CERIUM_TARGET_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,bmi,bmi2,fma,lzcnt,movbe,popcnt")))
#else
// 1 where the compiler builds x86-64 variants (GCC or Clang on x86-64, outside nvcc), else 0.
#define CERIUM_HAS_SIMD_TARGETS 0
// Compiles the function it marks for x86-64-v3 (AVX2, BMI2, FMA); nothing elsewhere.
#define CERIUM_TARGET_AVX2
// Compiles the function it marks for x86-64-v4 (AVX-512 F, BW, CD, DQ, VL); nothing elsewhere.
#define CERIUM_TARGET_AVX512
#endif

#if CERIUM_HAS_SIMD_TARGETS
// Defines `void name params` running `body args` (a CERIUM_FORCE_INLINE function, so that it is compiled into
// each variant with the variant's instructions) as the level simd_level() picks. At namespace scope in a .cpp.
#define CERIUM_SIMD_VARIANTS(name, body, params, args)         \
  CERIUM_TARGET_AVX512 static void name##_avx512 params {      \
    body args;                                                 \
  }                                                            \
  CERIUM_TARGET_AVX2 static void name##_avx2 params {          \
    body args;                                                 \
  }                                                            \
  static void name##_baseline params {                         \
    body args;                                                 \
  }                                                            \
  static void name params {                                    \
    switch (::cerium::simd_level()) {                          \
      case ::cerium::SimdLevel::avx512: return name##_avx512 args; \
      case ::cerium::SimdLevel::avx2: return name##_avx2 args; \
      default: return name##_baseline args;                    \
    }                                                          \
  }
#else
// Defines `void name params` running `body args` (the baseline only: no x86-64 variants here). At namespace scope
// in a .cpp.
#define CERIUM_SIMD_VARIANTS(name, body, params, args) \
  static void name params {                            \
    body args;                                         \
  }
#endif
