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
  require(digits != nullptr && key_b != nullptr && key_a != nullptr && out0 != nullptr && out1 != nullptr,
          "key-switch inner product on a null device pointer");
  require(automorphism == nullptr || automorphism->degree() == n_,
          "an automorphism of degree {} in a key switch of degree {}", automorphism ? automorphism->degree() : 0,
          n_);
  detail::InnerProductLaunch args;
  args.digits = digits;
  args.digit_count = digit_count;
  args.digit_stride = limbs_ * n_;
  args.key_b = key_b;
  args.key_a = key_a;
  args.key_stride = key_limbs() * n_;
  args.q_limbs = layout_.q_limbs;
  args.key_p_shift = layout_.key_q_limbs - layout_.q_limbs;
  args.moduli = table_data<math::Modulus>(moduli_);
  args.permutation = automorphism ? automorphism->device_permutation() : nullptr;
  args.out0 = out0;
  args.out1 = out1;
  args.limbs = limbs_;
  args.log_degree = log_n_;
  args.stream = stream.native_handle();
  detail::launch_inner_product(args);
}

}  // namespace cerium::cuda
