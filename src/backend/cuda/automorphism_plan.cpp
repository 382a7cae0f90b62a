#include <bit>

#include "cerium/backend/cuda/automorphism.hpp"
#include "cerium/backend/cuda/primitives_launch.hpp"
#include "cerium/backend/cuda/upload.hpp"
#include "cerium/core/check.hpp"

namespace cerium::cuda {

AutomorphismPlan::AutomorphismPlan(const ring::Automorphism& automorphism, Stream stream)
    : n_(automorphism.n()),
      log_n_(std::countr_zero(automorphism.n())),
      galois_element_(automorphism.galois_element()) {
  require(n_ >= 4, "the automorphism kernel moves 4 words at a time: N = {} is too small", n_);
  permutation_ = upload_table<std::uint32_t>(automorphism.ntt_permutation(), std::move(stream));
}

void AutomorphismPlan::apply(const std::uint32_t* in, std::uint32_t* out, std::size_t limbs,
                             const Stream& stream) const {
  if (limbs == 0) return;
  require(in != nullptr && out != nullptr, "automorphism on a null device pointer");
  require(in + limbs * n_ <= out || out + limbs * n_ <= in, "the automorphism needs separate input and output");
  detail::AutomorphismLaunch args;
  args.in = in;
  args.out = out;
  args.permutation = permutation_.data();
  args.log_degree = log_n_;
  args.limbs = limbs;
  args.stream = stream.native_handle();
  detail::launch_automorphism(args);
}

}  // namespace cerium::cuda
