#pragma once
// The launcher of the mixed linear combination (kernels/elementwise.cu): out = sum_t a_t b_t + sum_u c_u s_u
// (+ out) in one pass, the products by polynomials and by per-limb constants of a fused sum (plan/fused_sum.hpp).
// Like primitives_launch.hpp: raw limb-major device memory, no CUDA header. Scalars travel in the launch
// parameters (no upload, nothing a captured graph would have to keep alive); the plan chains launches with
// accumulate when a sum has more terms than one launch carries.

#include <cstddef>
#include <cstdint>

#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/math/modarith.hpp"

namespace cerium::cuda::detail {

inline constexpr std::size_t mixed_combination_max_products = 32;
inline constexpr std::size_t mixed_combination_max_scaled = 16;
// Scalar words per launch (scaled terms x limbs), sized so that the parameters stay under the classic 4 KiB.
inline constexpr std::size_t mixed_combination_scalar_words = 640;

struct MixedCombinationLaunch {
  const std::uint32_t* a[mixed_combination_max_products] = {};
  const std::uint32_t* b[mixed_combination_max_products] = {};
  const std::uint32_t* c[mixed_combination_max_scaled] = {};
  std::uint32_t scalars[mixed_combination_scalar_words] = {};  // scalars[u * limbs + i], reduced mod q_i
  std::uint32_t products = 0;
  std::uint32_t scaled = 0;
  bool accumulate = false;
  std::uint32_t* out = nullptr;  // must not be one of the factors
  // The rescale's closing step, when set: out = (sum - subtrahend) finish_scale_i (Shoup), as subtract_and_scale.
  const std::uint32_t* subtrahend = nullptr;
  const ShoupPair* finish_scale = nullptr;  // limbs entries, on the device
  const math::Modulus* moduli = nullptr;
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream = nullptr;
  // -1: every b[t] is limbs x N words. g >= 2: every b[t] is a compact plaintext (ScaledEncodingLaunch::compact),
  // limbs x N / 2^g words, word k of a limb standing for its words k 2^g .. k 2^g + 2^g - 1.
  int b_log_gap = -1;
};
void launch_mixed_combination(const MixedCombinationLaunch& launch);

// out + t out_stride = a[t] b[t] over `limbs` limbs for each term t (a sum's products kept apart: the limbs a
// rescale drops, one launch for all the terms instead of one each). b as MixedCombinationLaunch::b_log_gap says.
inline constexpr std::size_t term_products_max_terms = 64;

struct TermProductsLaunch {
  const std::uint32_t* a[term_products_max_terms] = {};
  const std::uint32_t* b[term_products_max_terms] = {};
  std::uint32_t terms = 0;
  int b_log_gap = -1;
  std::uint32_t* out = nullptr;  // terms x out_stride words; must not overlap a factor
  std::size_t out_stride = 0;
  const math::Modulus* moduli = nullptr;
  int log_degree = 0;
  std::size_t limbs = 0;
  void* stream = nullptr;
};
void launch_term_products(const TermProductsLaunch& launch);

}  // namespace cerium::cuda::detail
