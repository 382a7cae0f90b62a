#pragma once
// The evaluator sequence behind expr::polynomial (see expr/polynomial.hpp for the depth and scale rules): the
// schedule of expr/power_basis.hpp run on ciphertexts, powers on the scale chain, each computed once, then
// sum_k c_k x^k with the constants' products sharing one rescale. Written against the eager evaluator, so
// eval(polynomial(...)) is this sequence word for word; its counts (plan/power_basis_count.hpp) run the same schedule.
//
// Lazy (the planner's form): a power no other power is made from, x^k = x^a x^b, is never relinearized nor
// rescaled on its own. Its term is the 3-part tensor x^a (x) rescale(c_k x^b) at the sum's level, with c_k
// encoded at the scale that lands the tensor on the sum's scale; the sum is relinearized once, then rescaled.
// Why this shape: rescaling a 3-part ciphertext rounds its s^2 part too, and that rounding decrypts multiplied
// by s^2, about sqrt(N) times a 2-part rescale's error (8 bits at N = 2^16). Here no 3-part ciphertext is ever
// rescaled, and the one key switch is divided by the final rescale like every other error.

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/core/check.hpp"
#include "cerium/expr/node.hpp"
#include "cerium/expr/power_basis.hpp"
#include "cerium/plan/fused_sum.hpp"
#include "cerium/plan/terms.hpp"

namespace cerium::plan {

namespace power_basis_detail {

// The schedule's operations on ciphertexts.
template <backend::PolyBackend B>
struct Run {
  using Value = ckks::Ciphertext;
  using T = Term<ckks::Ciphertext>;
  struct Terms {
    std::vector<T> list;
    std::vector<expr::ConstLeaf> constants;  // the leaves the scalar terms point to, sized once
  };
  const ckks::BasicEvaluator<B>& ev;
  const circuits::ScaleChain& chain;
  std::span<const double> c;  // the coefficients being evaluated

  static int level(const Value& v) { return v.level(); }
  static Value clone(const Value& v) { return v.clone(); }
  void bring_to(Value& v, int level) const { chain.bring_to(ev, v, level); }
  Value multiply(const Value& a, const Value& b) const { return chain.multiply(ev, a, b); }
  void level_down(Value& v, int level) const { ev.level_down_inplace(v, level); }
  // c x^k = x^a (x) rescale(c x^b) at `level`, on the scale the 2-part terms c_j x^j have there (chain P_level):
  // y = x^b one level above, times c encoded at the scale that makes the tensor land there, rescaled.
  void scale_factor(Value& y, const Value& x, std::size_t k, int level) const {
    const double target = chain.at(level) * ev.level_prime_product(level);
    const double encoding = target * ev.level_prime_product(level + 1) / (x.scale() * y.scale());
    circuits::multiply_constant_at_scale(ev, y, c[k], encoding);
    ev.rescale_inplace(y);
  }
  static Terms terms(std::size_t degree) {
    Terms t;
    t.constants.resize(degree + 1);
    return t;
  }
  static void tensor_term(Terms& t, Value x, Value y) {
    T term;
    term.kind = TermKind::cipher_product;
    term.a = std::move(x);
    term.b = std::move(y);
    t.list.push_back(std::move(term));
  }
  void scalar_term(Terms& t, Value v, std::size_t k) const {
    T term;
    term.kind = TermKind::scalar_product;
    term.a = std::move(v);
    t.constants[k].value = c[k];
    term.constant = &t.constants[k];
    t.list.push_back(std::move(term));
  }
  // fuse: the terms' products (c_k by a scalar per limb, the tensor terms' factors) accumulated in one pass per
  // part (plan/fused_sum.hpp), the same words as multiplying and adding them one by one.
  Value sum(Terms& t, bool fuse) const {
    Value out;
    if (fuse && fused_sum(ev, std::span<T>(t.list), out)) return out;
    for (std::size_t i = 0; i < t.list.size(); ++i) {
      T& term = t.list[i];
      Value v;
      if (term.kind == TermKind::cipher_product) {
        v = ev.multiply_no_relin(term.a, term.b);
      } else {
        v = std::move(term.a);
        ev.multiply_inplace(v, term.constant->value.real());
      }
      if (i == 0) out = std::move(v); else ev.add_inplace(out, v);
    }
    return out;
  }
  void add_constant(Value& v) const { ev.add_inplace(v, c[0]); }
  void relinearize_rescale(Value& v) const { ev.relinearize_rescale_inplace(v); }
};

}  // namespace power_basis_detail

// The powers of one ciphertext x and the polynomials evaluated from them (the header comment); it keeps the
// powers, so several polynomials of one x share them.
template <backend::PolyBackend B>
class PowerBasis {
 public:
  // lazy: see above; otherwise every power is relinearized (the eager form).
  PowerBasis(const ckks::BasicEvaluator<B>& evaluator, const ckks::Ciphertext& x, bool lazy = false)
      : chain_(circuits::ScaleChain::descending(evaluator, x.level(), x.scale())),
        ops_{evaluator, chain_, {}},
        schedule_(ops_, x, lazy) {}
  PowerBasis(const PowerBasis&) = delete;  // ops_ refers to chain_
  PowerBasis& operator=(const PowerBasis&) = delete;

  // x^k, computed once: x^a x^(k-a) with a the largest power of two below k. Call evaluate first, or ask for
  // the powers in increasing order up to a fixed degree.
  const ckks::Ciphertext& power(std::size_t k) { return schedule_.power(ops_, k); }

  // sum_k c_k x^k at the deepest power's level; the constant products share one rescale. fuse (lazy form
  // only): the terms' products in one fused pass per part.
  ckks::Ciphertext evaluate(std::span<const double> c, bool fuse = false) {
    require(c.size() >= 2, "polynomial: {} coefficients; give at least c_0 and c_1", c.size());
    // The depth against the argument's level before any work (expr/polynomial.hpp: the powers, then one level for
    // the coefficients), rather than an evaluator error deep inside the schedule.
    const std::size_t degree = c.size() - 1;
    const int depth = expr::power_basis::depth(degree) + 1;
    require<LevelError>(depth <= chain_.top(),
                        "polynomial of degree {}: needs {} levels ({} for the powers, 1 for the coefficients) and "
                        "its argument is at level {}; bootstrap the argument first, or lower the degree",
                        degree, depth, depth - 1, chain_.top());
    ops_.c = c;
    ckks::Ciphertext out = schedule_.evaluate(ops_, c.size() - 1, fuse);
    ops_.c = {};
    return out;
  }

  // The level of the deepest power of a polynomial of this degree: where its terms are summed.
  int sum_level(std::size_t degree) const { return schedule_.sum_level(degree); }

  // Onto the chain at `level` (circuits::ScaleChain::bring_to).
  void bring_to(ckks::Ciphertext& a, int level) const { ops_.bring_to(a, level); }

 private:
  circuits::ScaleChain chain_;
  power_basis_detail::Run<B> ops_;
  expr::power_basis::Schedule<power_basis_detail::Run<B>> schedule_;
};

}  // namespace cerium::plan
