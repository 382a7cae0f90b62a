#pragma once
// Compiler and target macros shared by host and device code.

// Function qualifiers for nvcc: CERIUM_HD for code callable from host and device, CERIUM_DEVICE for device-only
// code. Empty for a host compiler. The macros of this header are documented on their #else branch: the one that
// Doxygen reads.
#if defined(__CUDACC__)
#define CERIUM_HD __host__ __device__
#define CERIUM_DEVICE __device__
#else
// Marks code callable from host and device: `__host__ __device__` under nvcc, empty for a host compiler.
#define CERIUM_HD
// Marks device-only code: `__device__` under nvcc, empty for a host compiler.
#define CERIUM_DEVICE
#endif

// Inside device code (the device pass of nvcc), as opposed to host code compiled by any compiler.
#if defined(__CUDA_ARCH__)
#define CERIUM_DEVICE_PASS 1
#else
// 1 inside device code (the device pass of nvcc), 0 in host code compiled by any compiler.
#define CERIUM_DEVICE_PASS 0
#endif

// Inlines a small hot function even where the optimizer would not (plain `inline` on other compilers).
#if defined(__GNUC__) || defined(__clang__)
#define CERIUM_FORCE_INLINE inline __attribute__((always_inline))
#else
// `inline` for a small hot function, forced even where the optimizer would not inline it (always_inline on GCC
// and Clang); plain `inline` on other compilers.
#define CERIUM_FORCE_INLINE inline
#endif

#include <cstddef>

namespace cerium {
// Every buffer of residues is aligned to this many bytes (one 256-byte line per limb start on the GPU).
inline constexpr std::size_t buffer_alignment = 256;
}  // namespace cerium
