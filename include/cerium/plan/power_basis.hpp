#pragma once
// The evaluator sequence behind expr::polynomial (see expr/polynomial.hpp for the depth and scale rules):
// powers on the scale chain, each computed once, then sum_k c_k x^k with the constants' products sharing one
// rescale. Written against the eager evaluator, so eval(polynomial(...)) is this sequence word for word.
//
// Lazy (the planner's form): a power no other power is made from, x^k = x^a x^b, is never relinearized nor
// rescaled on its own. Its term is the 3-part tensor x^a (x) rescale(c_k x^b) at the sum's level, with c_k
// encoded at the scale that lands the tensor on the sum's scale; the sum is relinearized once, then rescaled.
// Why this shape: rescaling a 3-part ciphertext rounds its s^2 part too, and that rounding decrypts multiplied
// by s^2, about sqrt(N) times a 2-part rescale's error (8 bits at N = 2^16). Here no 3-part ciphertext is ever
// rescaled, and the one key switch is divided by the final rescale like every other error.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"
#include "cerium/expr/polynomial.hpp"
#include "cerium/plan/fused_sum.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

template <backend::PolyBackend B>
class PowerBasis {
 public:
  // lazy: see above; otherwise every power is relinearized (the eager form).
  PowerBasis(const ckks::BasicEvaluator<B>& evaluator, const ckks::Ciphertext& x, bool lazy = false)
      : ev_(evaluator),
        lazy_(lazy),
        top_(x.level()),
        chain_(circuits::ScaleChain::descending(evaluator, x.level(), x.scale())) {
    powers_.resize(2);
    powers_[1] = x.clone();
  }

  // x^k, computed once: x^a x^(k-a) with a the largest power of two below k. Call evaluate first, or ask for
  // the powers in increasing order up to a fixed degree (the powers are stored in a vector that may grow).
  const ckks::Ciphertext& power(std::size_t k) {
    if (k >= powers_.size()) powers_.resize(k + 1);
    if (!powers_[k]) {
      const std::size_t a = std::bit_floor(k - 1);
      const ckks::Ciphertext& pa = power(a);
      const ckks::Ciphertext& pb = power(k - a);
      powers_[k] = multiply_on_chain(pa, pb);
    }
    return *powers_[k];
  }

  // sum_k c_k x^k at the deepest power's level; the constant products share one rescale. fuse (lazy form
  // only): the terms' products (c_k by a scalar per limb, the tensor terms' factors) accumulated in one pass per
  // part (plan/fused_sum.hpp), the same words as multiplying and adding them one by one.
  ckks::Ciphertext evaluate(std::span<const double> c, bool fuse = false) {
    require(c.size() >= 2, "polynomial: {} coefficients; give at least c_0 and c_1", c.size());
    const std::size_t degree = c.size() - 1;
    degree_ = degree;
    if (powers_.size() < degree + 1) powers_.resize(degree + 1);  // no resize while references are held
    for (std::size_t k = 2; k <= degree; ++k)
      if (!lazy_term(k)) power(k);
    const int level = sum_level(degree);
    using T = Term<ckks::Ciphertext>;
    std::vector<expr::ConstLeaf> constants(degree + 1);  // the leaves the scalar terms point to
    std::vector<T> terms;
    for (std::size_t k = 1; k <= degree; ++k) {
      T t;
      if (lazy_term(k)) {
        t.kind = T::Kind::cipher_product;
        std::tie(t.a, t.b) = tensor_factors(k, c[k], level);
      } else {
        t.kind = T::Kind::scalar_product;
        t.a = powers_[k]->clone();
        bring_to(t.a, level);
        constants[k].value = c[k];
        t.constant = &constants[k];
      }
      terms.push_back(std::move(t));
    }
    ckks::Ciphertext sum;
    if (!fuse || !lazy_ || !fused_sum(ev_, std::span<T>(terms), sum)) {
      for (std::size_t i = 0; i < terms.size(); ++i) {
        T& t = terms[i];
        ckks::Ciphertext term;
        if (t.kind == T::Kind::cipher_product) {
          term = ev_.multiply_no_relin(t.a, t.b);
        } else {
          term = std::move(t.a);
          ev_.multiply_inplace(term, t.constant->value.real());
        }
        if (i == 0) {
          sum = std::move(term);
        } else {
          ev_.add_inplace(sum, term);
        }
      }
    }
    ev_.add_inplace(sum, c[0]);
    ev_.relinearize_rescale_inplace(sum);  // the lazy terms' s^2 parts, then the rescale (one key switch)
    return sum;
  }

  // The level of the deepest power of a polynomial of this degree: where its terms are summed.
  int sum_level(std::size_t degree) const { return top_ - static_cast<int>(std::bit_width(degree - 1)); }

  // Onto the chain at `level` (circuits::ScaleChain::bring_to).
  void bring_to(ckks::Ciphertext& a, int level) const { chain_.bring_to(ev_, a, level); }

 private:
  // Whether x^k enters the sum as a 3-part tensor term (lazy, and no other power is made from it).
  bool lazy_term(std::size_t k) const { return lazy_ && k > 1 && !expr::power_basis::is_factor(k, degree_); }

  // c x^k = x^a (x) rescale(c x^b) at `level`, on the scale the 2-part terms c_j x^j have there (chain P_level):
  // x^b is brought one level above, times c encoded at the scale that makes the tensor land there, rescaled;
  // x^a drops limbs (exact) to meet it. Returns the two factors.
  std::pair<ckks::Ciphertext, ckks::Ciphertext> tensor_factors(std::size_t k, double c, int level) {
    const std::size_t a = expr::power_basis::factor(k);
    ckks::Ciphertext y = power(k - a).clone();
    bring_to(y, level + 1);
    ckks::Ciphertext x = power(a).clone();
    ev_.level_down_inplace(x, level);
    const double target = chain_.at(level) * ev_.level_prime_product(level);
    const double encoding = target * ev_.level_prime_product(level + 1) / (x.scale() * y.scale());
    circuits::multiply_constant_at_scale(ev_, y, c, encoding);
    ev_.rescale_inplace(y);
    return {std::move(x), std::move(y)};
  }

  // Relinearized and rescaled on the chain (circuits::ScaleChain::multiply).
  ckks::Ciphertext multiply_on_chain(const ckks::Ciphertext& a, const ckks::Ciphertext& b) const {
    return chain_.multiply(ev_, a, b);
  }

  const ckks::BasicEvaluator<B>& ev_;
  bool lazy_ = false;
  std::size_t degree_ = 0;  // of the polynomial being evaluated: which powers are factors of others
  int top_ = 0;
  circuits::ScaleChain chain_;
  std::vector<std::optional<ckks::Ciphertext>> powers_;
};

}  // namespace cerium::plan
