#include "cerium/rlwe/key_switch.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/math/sampler.hpp"

namespace cerium::rlwe {

void require_key_switch_input(const Context& context, const ring::RnsPoly& c, int level) {
  const auto& expected = context.q_basis(level);
  require<MismatchError>(!c.empty() && c.basis() == *expected && c.form() == ring::PolyForm::ntt,
                         "key switching at level {} needs a polynomial over {} in NTT form; got {}", level,
                         ring::describe(*expected),
                         c.empty() ? std::string("an empty polynomial")
                                   : fmt::format("{} in {} form", ring::describe(c.basis()), ring::to_string(c.form())));
}

void require_key_switch_apply_inputs(const Context& context, const DecomposedPoly& decomposed, const SwitchingKey& key,
                          const ring::Automorphism* automorphism) {
  const int level = decomposed.level;
  const std::size_t digits = context.digit_count(level);  // LevelError for a level that does not exist
  require<MismatchError>(decomposed.digits.size() == digits,
                         "a decomposition at level {} has {} digits; this one has {}", level, digits,
                         decomposed.digits.size());
  const auto& qp = *context.qp_basis(level);
  for (std::size_t d = 0; d < digits; ++d) {
    const auto& digit = decomposed.digits[d];
    require<MismatchError>(!digit.empty() && digit.basis() == qp && digit.form() == ring::PolyForm::ntt,
                           "digit {} of the decomposition must be over {} (level {}) in NTT form", d,
                           ring::describe(qp), level);
  }
  require<MismatchError>(key.context() != nullptr, "key switching with an empty switching key");
  require_same_ladder(key.context().get(), &context, "key switching: the switching key and the context");
  require<MismatchError>(key.digit_count() >= digits, "the switching key has {} digits; level {} needs {}",
                         key.digit_count(), level, digits);
  if (automorphism != nullptr) {
    require<MismatchError>(automorphism->n() == context.ring_degree(),
                           "an automorphism of degree {} cannot act on ring degree {}", automorphism->n(),
                           context.ring_degree());
  }
}

namespace {

// acc[k] += x[source(k)] * y[k] for both key halves; source is the automorphism's permutation or the identity.
void accumulate(std::span<const std::uint32_t> x, const std::uint32_t* permutation, std::span<const std::uint32_t> b,
                std::span<const std::uint32_t> a, std::vector<math::WideAccumulator>& acc0,
                std::vector<math::WideAccumulator>& acc1) {
  const std::size_t n = x.size();
  if (permutation != nullptr) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint32_t v = x[permutation[k]];
      acc0[k].add_product(v, b[k]);
      acc1[k].add_product(v, a[k]);
    }
  } else {
    for (std::size_t k = 0; k < n; ++k) {
      acc0[k].add_product(x[k], b[k]);
      acc1[k].add_product(x[k], a[k]);
    }
  }
}

}  // namespace

DecomposedPoly decompose_and_mod_up(const Context& context, const ring::RnsPoly& c, int level) {
  require_key_switch_input(context, c, level);
  DecomposedPoly out{level, {}};
  const std::size_t digits = context.digit_count(level);
  out.digits.reserve(digits);
  for (std::size_t d = 0; d < digits; ++d) out.digits.push_back(context.mod_up(level, d).apply(c));
  return out;
}

void key_switch_inner_product_limbs(const Context& context, const DecomposedPoly& decomposed, const SwitchingKey& key,
                                    const ring::Automorphism* automorphism, std::span<const std::size_t> positions,
                                    std::array<ring::RnsPoly, 2>& sum) {
  require_key_switch_apply_inputs(context, decomposed, key, automorphism);
  const int level = decomposed.level;
  const std::size_t n = context.ring_degree();
  const std::size_t digits = decomposed.digits.size();
  const std::size_t q_limbs = context.limbs_at(level);
  const std::size_t q_top = context.ladder().q_primes.size();
  const auto& qp = context.qp_basis(level);
  for (const auto& s : sum) {
    require<MismatchError>(!s.empty() && s.basis() == *qp && s.form() == ring::PolyForm::ntt,
                           "key-switch inner product: the sums must be over {} in NTT form", ring::describe(*qp));
  }
  const std::uint32_t* permutation = automorphism ? automorphism->ntt_permutation().data() : nullptr;
  std::vector<math::WideAccumulator> acc0(n), acc1(n);
  AlignedBuffer<std::uint32_t> expanded(n, BufferInit::uninitialized);  // a seeded a_d limb

  for (const std::size_t j : positions) {
    require(j < qp->size(), "key-switch inner product: limb {} of {}", j, qp->size());
    // Limb j of Q_l u P is key limb j for a Q prime and q_top + (j - q_limbs) for a P prime.
    const std::size_t key_limb = j < q_limbs ? j : q_top + (j - q_limbs);
    std::fill(acc0.begin(), acc0.end(), math::WideAccumulator{});
    std::fill(acc1.begin(), acc1.end(), math::WideAccumulator{});
    for (std::size_t d = 0; d < digits; ++d) {
      std::span<const std::uint32_t> a;
      if (const ring::RnsPoly* stored = key.stored_a(d)) {
        a = stored->limb(key_limb);
      } else {
        key.a_limb(d, key_limb, expanded.span());
        a = expanded.span();
      }
      accumulate(decomposed.digits[d].limb(j), permutation, key.b(d).limb(key_limb), a, acc0, acc1);
    }
    const math::Modulus& m = qp->modulus(j);
    auto out0 = sum[0].limb(j);
    auto out1 = sum[1].limb(j);
    for (std::size_t k = 0; k < n; ++k) {
      out0[k] = acc0[k].reduce(m);
      out1[k] = acc1[k].reduce(m);
    }
  }
}

std::array<ring::RnsPoly, 2> key_switch_inner_product(const Context& context, const DecomposedPoly& decomposed,
                                                      const SwitchingKey& key,
                                                      const ring::Automorphism* automorphism) {
  const auto& qp = context.qp_basis(decomposed.level);
  const ring::PolyOptions options{.form = ring::PolyForm::ntt, .init = BufferInit::uninitialized};
  std::array<ring::RnsPoly, 2> sum{ring::RnsPoly(qp, options), ring::RnsPoly(qp, options)};
  std::vector<std::size_t> all(qp->size());
  for (std::size_t j = 0; j < all.size(); ++j) all[j] = j;
  key_switch_inner_product_limbs(context, decomposed, key, automorphism, all, sum);
  return sum;
}

std::array<ring::RnsPoly, 2> key_switch_apply(const Context& context, const DecomposedPoly& decomposed,
                                              const SwitchingKey& key, const ring::Automorphism* automorphism) {
  const auto sum = key_switch_inner_product(context, decomposed, key, automorphism);
  const ring::ModDown& mod_down = context.mod_down(decomposed.level);
  return {mod_down.apply(sum[0]), mod_down.apply(sum[1])};
}

std::array<ring::RnsPoly, 2> key_switch_apply_rescaled(const Context& context, const DecomposedPoly& decomposed,
                                                       const SwitchingKey& key, const ring::Automorphism* automorphism,
                                                       std::array<const ring::RnsPoly*, 2> addends,
                                                       const ring::Rescaler& rescaler) {
  const auto sum = key_switch_inner_product(context, decomposed, key, automorphism);
  const ring::ModDown& mod_down = context.mod_down(decomposed.level);
  return {ring::mod_down_and_rescale(mod_down, rescaler, sum[0], addends[0]),
          ring::mod_down_and_rescale(mod_down, rescaler, sum[1], addends[1])};
}

std::array<ring::RnsPoly, 2> key_switch(const Context& context, const ring::RnsPoly& c, int level,
                                        const SwitchingKey& key) {
  return key_switch_apply(context, decompose_and_mod_up(context, c, level), key);
}

double key_switch_noise_bound(const Context& context, int level, double secret_l1_norm) {
  const auto& q = context.ladder().q_primes;
  const std::size_t q_limbs = context.limbs_at(level);
  const std::size_t alpha = context.alpha();
  const double n = static_cast<double>(context.ring_degree());
  double log_p = 0;
  for (const std::uint32_t p : context.ladder().p_primes) log_p += std::log2(static_cast<double>(p));
  double digit_sum = 0;  // sum_d alpha_d Q_d / P
  for (std::size_t first = 0; first < q_limbs; first += alpha) {
    const std::size_t count = std::min(alpha, q_limbs - first);
    double log_qd = 0;
    for (std::size_t i = first; i < first + count; ++i) log_qd += std::log2(static_cast<double>(q[i]));
    digit_sum += static_cast<double>(count) * std::exp2(log_qd - log_p);
  }
  const double tail = math::gaussian_tail_bound;
  return tail * n * digit_sum + (static_cast<double>(alpha) - 0.5) * (1.0 + secret_l1_norm);
}

}  // namespace cerium::rlwe
