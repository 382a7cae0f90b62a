#include "cerium/ring/automorphism.hpp"

#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/ntt.hpp"
#include "cerium/math/ntt_butterfly.hpp"

namespace cerium::ring {

std::uint32_t rotation_galois_element(std::int64_t steps, std::size_t n) {
  require(n >= 2 && (n & (n - 1)) == 0, "ring degree {} is not a power of two >= 2", n);
  const auto order = static_cast<std::int64_t>(n / 2);  // the order of 5 in (Z/2NZ)*
  const std::int64_t reduced = ((steps % order) + order) % order;
  return static_cast<std::uint32_t>(math::pow_mod(5, static_cast<std::uint64_t>(reduced), static_cast<std::uint32_t>(2 * n)));
}

Automorphism::Automorphism(std::size_t n, std::uint32_t galois_element) : n_(n), k_(galois_element) {
  require(n >= 2 && (n & (n - 1)) == 0 && n <= (std::size_t{1} << math::max_log_ring_degree),
          "ring degree {} must be a power of two between 2 and 2^{}", n, math::max_log_ring_degree);
  const std::uint64_t two_n = 2 * n;
  require(k_ % 2 == 1 && k_ < two_n, "Galois element {} must be odd and below 2N = {}", k_, two_n);
  int log_n = 0;
  while ((std::size_t{1} << log_n) < n) ++log_n;

  coeff_target_.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t e = i * k_ % two_n;
    coeff_target_[i] = e < n ? static_cast<std::uint32_t>(e) : (static_cast<std::uint32_t>(e - n) | negate_flag);
  }
  ntt_source_.resize(n);
  for (std::uint32_t j = 0; j < n; ++j) {
    const std::uint64_t e = 2 * std::uint64_t{math::bit_reverse(j, log_n)} + 1;  // output j evaluates at psi^e
    const std::uint64_t source_e = e * k_ % two_n;                                // odd
    ntt_source_[j] = math::bit_reverse(static_cast<std::uint32_t>((source_e - 1) / 2), log_n);
  }
}

void Automorphism::apply_coefficient(std::span<const std::uint32_t> in, std::span<std::uint32_t> out,
                                     std::uint32_t q) const {
  require(in.size() == n_ && out.size() == n_, "automorphism of degree {} applied to limbs of {} and {} words", n_,
          in.size(), out.size());
  require(in.data() != out.data(), "automorphism needs separate input and output limbs");
  for (std::size_t i = 0; i < n_; ++i) {
    const std::uint32_t t = coeff_target_[i];
    const std::uint32_t x = in[i];
    // Select x or -x without a branch on the (possibly secret) value; the flag itself is public.
    const std::uint32_t mask = 0u - (t >> 31);
    out[t & index_mask] = (x & ~mask) | (math::neg_mod(x, q) & mask);
  }
}

void Automorphism::apply_ntt(std::span<const std::uint32_t> in, std::span<std::uint32_t> out) const {
  require(in.size() == n_ && out.size() == n_, "automorphism of degree {} applied to limbs of {} and {} words", n_,
          in.size(), out.size());
  require(in.data() != out.data(), "automorphism needs separate input and output limbs");
  for (std::size_t j = 0; j < n_; ++j) out[j] = in[ntt_source_[j]];
}

RnsPoly Automorphism::apply(const RnsPoly& in) const {
  require<MismatchError>(!in.empty() && in.n() == n_, "automorphism of degree {} applied to a polynomial of degree {}",
                         n_, in.n());
  RnsPoly out(in.basis_ptr(), PolyOptions{.form = in.form(), .shards = in.shard_layout(), .init = BufferInit::uninitialized});
  for (std::size_t i = 0; i < in.limb_count(); ++i) {
    if (in.form() == PolyForm::ntt) apply_ntt(in.limb(i), out.limb(i));
    else apply_coefficient(in.limb(i), out.limb(i), in.basis().prime(i));
  }
  return out;
}

}  // namespace cerium::ring
