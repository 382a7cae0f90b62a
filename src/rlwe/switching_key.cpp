#include "cerium/rlwe/switching_key.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "cerium/core/check.hpp"
#include "cerium/math/modarith.hpp"
#include "cerium/ring/limb_arithmetic.hpp"
#include "cerium/rlwe/small_poly.hpp"
#include "cerium/rlwe/uniform.hpp"

namespace cerium::rlwe {
namespace {

// A key polynomial must lie over exactly `expected` in NTT form.
void require_key_poly(const ring::RnsPoly& poly, const ring::RnsBasis& expected, std::size_t digit, const char* half) {
  require<MismatchError>(!poly.empty() && poly.basis() == expected && poly.form() == ring::PolyForm::ntt,
                         "{} of switching-key digit {} must be over {} in NTT form; got {}", half, digit,
                         ring::describe(expected),
                         poly.empty() ? std::string("an empty polynomial")
                                      : fmt::format("{} in {} form", ring::describe(poly.basis()),
                                                    ring::to_string(poly.form())));
}

}  // namespace

SwitchingKey::SwitchingKey(ContextPtr context, std::vector<std::array<ring::RnsPoly, 2>> digits, KeyStorage storage,
                           std::optional<math::Seed> seed, std::uint64_t base_stream)
    : context_(std::move(context)),
      digits_(std::move(digits)),
      storage_(storage),
      seed_(seed),
      base_stream_(base_stream) {
  require<MismatchError>(context_ != nullptr, "switching key: no context given");
  const std::size_t expected = context_->digit_count(context_->max_level());
  require<MismatchError>(digits_.size() == expected,
                         "a switching key for these parameters has {} digits (alpha = {} primes each), not {}",
                         expected, context_->alpha(), digits_.size());
  const auto& key_basis = *context_->key_basis();
  for (std::size_t d = 0; d < digits_.size(); ++d) {
    require_key_poly(digits_[d][0], key_basis, d, "b");
    if (storage_ == KeyStorage::seeded && digits_[d][1].empty()) continue;
    require_key_poly(digits_[d][1], key_basis, d, "a");
  }
  if (storage_ == KeyStorage::seeded) {
    require<MismatchError>(seed_.has_value(), "a seeded switching key needs the seed of its uniform halves");
    require(base_stream_ < max_uniform_stream - digits_.size(),
            "switching-key stream {} (+ {} digits) exceeds the uniform stream range 2^56", base_stream_,
            digits_.size());
  }
}

ring::RnsPoly SwitchingKey::a(std::size_t digit) const {
  if (const ring::RnsPoly* stored = stored_a(digit)) return stored->clone();
  return expand_uniform(context_->key_basis(), *seed_, base_stream_ + digit);
}

const std::array<ring::RnsPoly, 2>& SwitchingKey::digit_pair(std::size_t digit) const {
  require(digit < digits_.size(), "switching key: digit {} does not exist; the key has {} digits", digit,
          digits_.size());
  return digits_[digit];
}

const ring::RnsPoly* SwitchingKey::stored_a(std::size_t digit) const {
  const ring::RnsPoly& a = digit_pair(digit)[1];
  return a.empty() ? nullptr : &a;
}

void SwitchingKey::a_limb(std::size_t digit, std::size_t limb, std::span<std::uint32_t> out) const {
  require(out.size() == context_->ring_degree(), "a limb of N = {} words needs an output of that size, not {}",
          context_->ring_degree(), out.size());
  if (const ring::RnsPoly* stored = stored_a(digit)) {
    const auto source = stored->limb(limb);
    std::copy(source.begin(), source.end(), out.begin());
    return;
  }
  expand_uniform_limb(*seed_, base_stream_ + digit, limb, context_->key_basis()->prime(limb), out);
}

SwitchingKey SwitchingKey::clone() const {
  std::vector<std::array<ring::RnsPoly, 2>> copies;
  copies.reserve(digits_.size());
  for (const auto& digit : digits_) {
    copies.push_back({digit[0].clone(), digit[1].empty() ? ring::RnsPoly() : digit[1].clone()});
  }
  return SwitchingKey(context_, std::move(copies), storage_, seed_, base_stream_);
}

void require_switching_key_secrets(const ContextPtr& context, const ring::RnsPoly& secret,
                                   const ring::RnsPoly& from_secret) {
  require<MismatchError>(context != nullptr, "switching key: no context given");
  const auto& key_basis = context->key_basis();
  for (const auto* poly : {&secret, &from_secret}) {
    require<MismatchError>(!poly->empty() && poly->basis() == *key_basis && poly->form() == ring::PolyForm::ntt,
                           "switching key: the {} secret must be over the key basis {} in NTT form",
                           poly == &secret ? "target" : "source", ring::describe(*key_basis));
  }
}

SwitchingKey make_switching_key(const ContextPtr& context, const ring::RnsPoly& secret,
                                const ring::RnsPoly& from_secret, const SwitchingKeyDraw& draw) {
  require_switching_key_secrets(context, secret, from_secret);
  const auto& key_basis = context->key_basis();
  const std::size_t digits = context->digit_count(context->max_level());

  std::vector<std::array<ring::RnsPoly, 2>> parts;
  parts.reserve(digits);
  // b = e + a (-s) limb by limb in place: the same words as b -= a * s without a fresh product per digit (at
  // N = 2^16 each one a 16 MB allocation whose pages the kernel zeroes: a third of a key's time on one core).
  const ring::RnsPoly negated_secret = -secret;
  for (std::size_t d = 0; d < digits; ++d) {
    ring::RnsPoly a = expand_uniform(key_basis, draw.uniform, draw.base_stream + d);
    ring::RnsPoly b = gaussian_poly(key_basis, draw.noise, draw.base_stream + d);
    for (std::size_t i = 0; i < b.limb_count(); ++i) {
      ring::multiply_accumulate_limb(b.limb(i), std::as_const(a).limb(i), negated_secret.limb(i),
                                     key_basis->modulus(i));
    }
    // + P g_d s': only the digit's limbs change (gadget_factors).
    const std::vector<std::uint32_t> factors = gadget_factors(*context, d);
    for (std::size_t i = 0; i < factors.size(); ++i) {
      if (factors[i] == 0) continue;
      const math::Modulus& m = key_basis->modulus(i);
      const math::ShoupConstant p_mod(factors[i], m.value);
      auto out = b.limb(i);
      const auto src = from_secret.limb(i);
      for (std::size_t k = 0; k < out.size(); ++k) {
        out[k] = math::add_mod(out[k], math::mul_shoup(src[k], p_mod, m.value), m.value);
      }
    }
    if (draw.storage == KeyStorage::seeded) a = ring::RnsPoly();
    parts.push_back({std::move(b), std::move(a)});
  }
  return SwitchingKey(context, std::move(parts), draw.storage, draw.uniform, draw.base_stream);
}

std::vector<std::uint32_t> gadget_factors(const Context& context, std::size_t digit) {
  const ring::RnsBasisPtr& key_basis = context.key_basis();
  const std::size_t q_count = context.ladder().q_primes.size();
  require(digit < context.digit_count(context.max_level()), "gadget factors of digit {}: the keys have {} digits",
          digit, context.digit_count(context.max_level()));
  std::vector<std::uint32_t> factors(key_basis->size(), 0);
  const std::size_t first = context.digit_first_prime(digit);
  for (std::size_t i = first; i < std::min(first + context.alpha(), q_count); ++i) {
    factors[i] = static_cast<std::uint32_t>(context.p_basis()->product_mod(key_basis->modulus(i)));
  }
  return factors;
}

}  // namespace cerium::rlwe
