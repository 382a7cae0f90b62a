#include "cerium/rlwe/key_switch.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cerium/core/aligned_buffer.hpp"
#include "cerium/core/check.hpp"
#include "cerium/core/simd.hpp"
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

// One digit's products for both key halves (the vectorized loops of core/simd.hpp, over coefficients):
// acc[k] = acc[k] + [x[source(k)] y[k] R^{-1}]_q (Montgomery, R = 2^32: 32-bit lanes, 64-bit products), source the
// automorphism's permutation or the identity; `first` writes instead of adding. finish_sums takes the factor R^{-1}
// out, so the sums are canonical residues: the words of any exact method.
struct DigitProducts {
  const std::uint32_t* x;            // the digit's limb
  const std::uint32_t* permutation;  // null: the identity
  const std::uint32_t* b;            // the key's two halves' limbs
  const std::uint32_t* a;
  std::uint32_t* acc0;
  std::uint32_t* acc1;
  std::size_t n;
  math::Modulus modulus;
  bool first;
};

CERIUM_FORCE_INLINE void digit_products_body(const DigitProducts& d) {
  const math::Modulus m = d.modulus;
  const std::uint32_t q = m.value;
  const std::uint32_t* x = d.x;
  const std::uint32_t* b = d.b;
  const std::uint32_t* a = d.a;
  std::uint32_t* acc0 = d.acc0;
  std::uint32_t* acc1 = d.acc1;
  if (d.permutation != nullptr) {
    const std::uint32_t* source = d.permutation;
    for (std::size_t k = 0; k < d.n; ++k) {
      const std::uint32_t v = x[source[k]];
      const std::uint32_t p0 = math::mul_montgomery(v, b[k], m), p1 = math::mul_montgomery(v, a[k], m);
      acc0[k] = d.first ? p0 : math::add_mod(acc0[k], p0, q);
      acc1[k] = d.first ? p1 : math::add_mod(acc1[k], p1, q);
    }
  } else {
    for (std::size_t k = 0; k < d.n; ++k) {
      const std::uint32_t p0 = math::mul_montgomery(x[k], b[k], m), p1 = math::mul_montgomery(x[k], a[k], m);
      acc0[k] = d.first ? p0 : math::add_mod(acc0[k], p0, q);
      acc1[k] = d.first ? p1 : math::add_mod(acc1[k], p1, q);
    }
  }
}

// out[k] = acc[k] R mod q: Montgomery's factor R^{-1} taken out.
CERIUM_FORCE_INLINE void finish_sums_body(const std::uint32_t* acc, std::uint32_t* out, std::size_t n,
                                          math::Modulus m) {
  for (std::size_t k = 0; k < n; ++k) out[k] = math::to_montgomery(acc[k], m);
}

CERIUM_SIMD_VARIANTS(digit_products, digit_products_body, (const DigitProducts& d), (d))
CERIUM_SIMD_VARIANTS(finish_sums, finish_sums_body,
                     (const std::uint32_t* acc, std::uint32_t* out, std::size_t n, math::Modulus m),
                     (acc, out, n, m))

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
  for (const std::size_t j : positions) require(j < qp->size(), "key-switch inner product: limb {} of {}", j, qp->size());
  // Limbs are independent: threads take whole limbs (core/parallel.hpp), each with its own sums.
#pragma omp parallel if (positions.size() > 1 && n >= 2048)
  {
  AlignedBuffer<std::uint32_t> acc0(n, BufferInit::uninitialized), acc1(n, BufferInit::uninitialized);
  AlignedBuffer<std::uint32_t> expanded(n, BufferInit::uninitialized);  // a seeded a_d limb
#pragma omp for schedule(static)
  for (std::size_t index = 0; index < positions.size(); ++index) {
    const std::size_t j = positions[index];
    // Limb j of Q_l u P is key limb j for a Q prime and q_top + (j - q_limbs) for a P prime.
    const std::size_t key_limb = j < q_limbs ? j : q_top + (j - q_limbs);
    const math::Modulus& m = qp->modulus(j);
    for (std::size_t d = 0; d < digits; ++d) {
      std::span<const std::uint32_t> a;
      if (const ring::RnsPoly* stored = key.stored_a(d)) {
        a = stored->limb(key_limb);
      } else {
        key.a_limb(d, key_limb, expanded.span());
        a = expanded.span();
      }
      digit_products({.x = decomposed.digits[d].limb(j).data(), .permutation = permutation,
                      .b = key.b(d).limb(key_limb).data(), .a = a.data(), .acc0 = acc0.data(), .acc1 = acc1.data(),
                      .n = n, .modulus = m, .first = d == 0});
    }
    finish_sums(acc0.data(), sum[0].limb(j).data(), n, m);
    finish_sums(acc1.data(), sum[1].limb(j).data(), n, m);
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
