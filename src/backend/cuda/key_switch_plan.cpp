#include <bit>
#include <vector>

#include "cerium/backend/cuda/key_switch.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"

namespace cerium::cuda {

KeySwitchInnerProductPlan::KeySwitchInnerProductPlan(const ring::RnsBasis& qp, KeySwitchLayout layout,
                                                     Stream stream)
    : n_(qp.ring_degree()), log_n_(std::countr_zero(qp.ring_degree())), limbs_(qp.size()), layout_(layout) {
  require(n_ >= 4, "the inner-product kernel moves 4 words at a time: N = {} is too small", n_);
  require(layout_.q_limbs <= limbs_ && layout_.q_limbs <= layout_.key_q_limbs,
          "key-switch layout: {} Q limbs of {} limbs with a key of {} Q limbs", layout_.q_limbs, limbs_,
          layout_.key_q_limbs);
  require(limbs_ <= 65535, "the inner product launches one block row per limb: {} limbs is too many", limbs_);
  std::vector<math::Modulus> moduli;
  for (std::size_t i = 0; i < limbs_; ++i) moduli.push_back(qp.modulus(i));
  moduli_ = upload_table<math::Modulus>(moduli, std::move(stream));
}

void KeySwitchInnerProductPlan::apply(const std::uint32_t* digits, std::size_t digit_count,
                                      const std::uint32_t* key_b, const std::uint32_t* key_a, std::uint32_t* out0,
                                      std::uint32_t* out1, const Stream& stream,
                                      const AutomorphismPlan* automorphism) const {
  require(digit_count <= detail::inner_product_max_digits, "{} key-switching digits; at most {} are supported",
          digit_count, detail::inner_product_max_digits);
  std::vector<const std::uint32_t*> d(digit_count), b(digit_count), a(digit_count);
  for (std::size_t i = 0; i < digit_count; ++i) {
    d[i] = digits + i * limbs_ * n_;
    b[i] = key_b + i * key_limbs() * n_;
    a[i] = key_a + i * key_limbs() * n_;
  }
  apply(d, b, a, out0, out1, stream, automorphism);
}

void KeySwitchInnerProductPlan::apply(std::span<const std::uint32_t* const> digits,
                                      std::span<const std::uint32_t* const> key_b,
                                      std::span<const std::uint32_t* const> key_a, std::uint32_t* out0,
                                      std::uint32_t* out1, const Stream& stream,
                                      const AutomorphismPlan* automorphism) const {
  for (std::size_t d = 0; d < digits.size(); ++d)
    require(digits[d] != nullptr, "key-switch inner product on a null device pointer (digit {})", d);
  detail::launch_inner_product(launch_args(digits, key_b, key_a, out0, out1, stream, automorphism));
}

detail::InnerProductLaunch KeySwitchInnerProductPlan::launch_args(std::span<const std::uint32_t* const> digits,
                                                                  std::span<const std::uint32_t* const> key_b,
                                                                  std::span<const std::uint32_t* const> key_a,
                                                                  std::uint32_t* out0, std::uint32_t* out1,
                                                                  const Stream& stream,
                                                                  const AutomorphismPlan* automorphism) const {
  const std::size_t count = digits.size();
  require(count <= detail::inner_product_max_digits && key_b.size() >= count && key_a.size() >= count,
          "key-switch inner product over {} digits with {} and {} key digits (at most {} digits)", count,
          key_b.size(), key_a.size(), detail::inner_product_max_digits);
  require(out0 != nullptr && out1 != nullptr, "key-switch inner product on a null device pointer");
  require(automorphism == nullptr || automorphism->degree() == n_,
          "an automorphism of degree {} in a key switch of degree {}", automorphism ? automorphism->degree() : 0,
          n_);
  detail::InnerProductLaunch args;
  for (std::size_t d = 0; d < count; ++d) {
    require(key_b[d] != nullptr && key_a[d] != nullptr, "key-switch inner product on a null key pointer (digit {})",
            d);
    args.digits[d] = digits[d];
    args.key_b[d] = key_b[d];
    args.key_a[d] = key_a[d];
  }
  args.digit_count = count;
  args.q_limbs = layout_.q_limbs;
  args.key_p_shift = layout_.key_q_limbs - layout_.q_limbs;
  args.moduli = table_data<math::Modulus>(moduli_);
  args.permutation = automorphism ? automorphism->device_permutation() : nullptr;
  args.out0 = out0;
  args.out1 = out1;
  args.limbs = limbs_;
  args.log_degree = log_n_;
  args.stream = stream.native_handle();
  return args;
}

}  // namespace cerium::cuda
