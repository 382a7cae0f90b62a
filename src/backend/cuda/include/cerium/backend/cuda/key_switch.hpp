#pragma once
// The inner product of hybrid key switching on the device: for each limb j of Q_l u P,
//   out0[j] = sum_d digit_d[j] b_d[key limb of j],   out1[j] = sum_d digit_d[j] a_d[key limb of j],
// accumulated exactly in 128 bits and reduced once, the words of the sum that ckks::key_switch_apply forms before
// its ModDown. An automorphism may be applied to the digits as they are read (hoisted rotations).

#include <cstddef>
#include <cstdint>
#include <span>

#include "cerium/backend/cuda/automorphism.hpp"
#include "cerium/backend/cuda/device_buffer.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/ring/rns_basis.hpp"

namespace cerium::cuda {

struct KeySwitchLayout {
  std::size_t q_limbs = 0;      // limbs of Q_l: the first q_limbs primes of Q_l u P
  std::size_t key_q_limbs = 0;  // Q primes of the key (the top level's), >= q_limbs; the key's P limbs follow
};

class KeySwitchInnerProductPlan {
 public:
  // qp: the basis Q_l u P (its first layout.q_limbs primes are Q_l). Uploads its moduli.
  KeySwitchInnerProductPlan(const ring::RnsBasis& qp, KeySwitchLayout layout, Stream stream = {});

  std::size_t limbs() const { return limbs_; }
  std::size_t key_limbs() const { return layout_.key_q_limbs + (limbs_ - layout_.q_limbs); }

  // digits: digit_count polynomials over qp (NTT form), contiguous (digit d at d limbs() N); key_b, key_a:
  // digit_count key polynomials, contiguous (digit d at d key_limbs() N). out0, out1: limbs() limbs each.
  void apply(const std::uint32_t* digits, std::size_t digit_count, const std::uint32_t* key_b,
             const std::uint32_t* key_a, std::uint32_t* out0, std::uint32_t* out1, const Stream& stream,
             const AutomorphismPlan* automorphism = nullptr) const;
  // The same with every digit and key digit at its own address (at most detail::inner_product_max_digits):
  // digits[d] over qp, key_b[d] and key_a[d] of key_limbs() limbs each.
  void apply(std::span<const std::uint32_t* const> digits, std::span<const std::uint32_t* const> key_b,
             std::span<const std::uint32_t* const> key_a, std::uint32_t* out0, std::uint32_t* out1,
             const Stream& stream, const AutomorphismPlan* automorphism = nullptr) const;
  // The launch that apply() makes, checked the same way: for a kernel that forms the digits itself and sums them
  // as it goes (NttPlan::forward_inner_product; the digit pointers may then be null).
  detail::InnerProductLaunch launch_args(std::span<const std::uint32_t* const> digits,
                                         std::span<const std::uint32_t* const> key_b,
                                         std::span<const std::uint32_t* const> key_a, std::uint32_t* out0,
                                         std::uint32_t* out1, const Stream& stream,
                                         const AutomorphismPlan* automorphism = nullptr) const;

 private:
  std::size_t n_ = 0;
  int log_n_ = 0;
  std::size_t limbs_ = 0;
  KeySwitchLayout layout_;
  DeviceBuffer moduli_;
};

}  // namespace cerium::cuda
