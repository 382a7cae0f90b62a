#pragma once
// Member definitions of BasicBootstrapper: EvalMod, a Chebyshev series of the scaled cosine evaluated
// baby-step giant-step, then double-angle steps, with every ciphertext kept on the scale chain. Included by
// bootstrapper.cpp, which instantiates them.
//
// Series evaluation: p = q + T_G r for the largest power of two G <= deg p, with
//   r_0 = c_G, r_i = 2 c_(G+i), q_(G-i) = c_(G-i) - c_(G+i)   (from T_G T_i = (T_(G+i) + T_(G-i)) / 2),
// recursively until the degree is below the baby-step count k; those leaves are sums c_i T_i over the baby
// powers T_1 .. T_(k-1), the constants folded into one rescale. Depth ceil(log2(deg + 1)) + 1.

#include <bit>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "cerium/ckks/bootstrap/bootstrapper.hpp"
#include "cerium/core/check.hpp"

namespace cerium::ckks {

// A scale that matches the chain's (scales_match) is the chain's up to the doubles' round-off, and is set to it:
// squarings double a relative round-off (four double angles multiply it by 16), which would otherwise carry the
// tracked scale past scales_match's tolerance although the message's scale is the chain's.
template <backend::PolyBackend B>
void BasicBootstrapper<B>::bring_to(Ciphertext& a, int level) const {
  const double target = chain_.at(static_cast<std::size_t>(level));
  if (a.level() == level) {
    require<LevelError>(scales_match(a.scale(), target),
                        "bootstrap (internal): a ciphertext at level {} has scale {} off the chain's {}", level,
                        format_scale(a.scale()), format_scale(target));
    a.set_scale(target);
    return;
  }
  if (scales_match(a.scale(), target)) {
    evaluator_.level_down_inplace(a, level);
    a.set_scale(target);
    return;
  }
  evaluator_.level_down_inplace(a, level + 1);
  evaluator_.adjust_scale_inplace(a, target);  // within scales_match of the target: snapped at its next use
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::multiply_on_chain(const Ciphertext& a, const Ciphertext& b) const {
  const int level = std::min(a.level(), b.level());
  Ciphertext x = a.clone();
  bring_to(x, level);
  // Delta_l^2 / P_l = Delta_(l-1); relinearized and rescaled in one key switch.
  if (&a == &b) {
    evaluator_.multiply_rescale_inplace(x, x);
  } else {
    Ciphertext y = b.clone();
    bring_to(y, level);
    evaluator_.multiply_rescale_inplace(x, y);
  }
  return x;
}

template <backend::PolyBackend B>
void BasicBootstrapper<B>::add_on_chain(Ciphertext& a, const Ciphertext& b) const {
  const int level = std::min(a.level(), b.level());
  bring_to(a, level);
  Ciphertext y = b.clone();
  bring_to(y, level);
  evaluator_.add_inplace(a, y);
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::chebyshev_leaves(const std::vector<double>& c,
                                                  const std::vector<Ciphertext>& powers) const {
  // All terms meet at the lowest level among the powers used, each constant encoded so that every product has
  // the scale Delta_(L-1) P_L: one sum, one rescale, and the result is on the chain.
  int level = powers[1].level();
  for (std::size_t i = 1; i < c.size(); ++i) level = std::min(level, powers[i].level());
  const double product_scale =
      chain_.at(static_cast<std::size_t>(level - 1)) * evaluator_.level_prime_product(level);
  Ciphertext sum;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i] == 0) continue;
    Ciphertext term = evaluator_.level_down(powers[i], level);
    multiply_by_constant(term, c[i], product_scale / term.scale());
    term.set_scale(product_scale);  // equal to the product of the two scales up to rounding of doubles
    if (sum.empty()) {
      sum = std::move(term);
    } else {
      evaluator_.add_inplace(sum, term);
    }
  }
  if (sum.empty()) {  // a constant polynomial: 0 T_1 + c_0
    sum = evaluator_.level_down(powers[1], level);
    multiply_by_constant(sum, 0.0, product_scale / sum.scale());
    sum.set_scale(product_scale);
  }
  evaluator_.rescale_inplace(sum);
  evaluator_.add_inplace(sum, c[0]);
  return sum;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::chebyshev_series(std::vector<double> c, const std::vector<Ciphertext>& powers,
                                                  std::size_t baby) const {
  if (c.size() <= baby) return chebyshev_leaves(c, powers);
  const std::size_t degree = c.size() - 1;
  const std::size_t giant = std::bit_floor(degree);
  std::vector<double> r(degree - giant + 1);
  r[0] = c[giant];
  for (std::size_t i = 1; i < r.size(); ++i) {
    r[i] = 2 * c[giant + i];
    c[giant - i] -= c[giant + i];
  }
  c.resize(giant);
  Ciphertext high = multiply_on_chain(powers.at(giant), chebyshev_series(std::move(r), powers, baby));
  add_on_chain(high, chebyshev_series(std::move(c), powers, baby));
  return high;
}

template <backend::PolyBackend B>
Ciphertext BasicBootstrapper<B>::eval_mod(const Ciphertext& half) const {
  require<LevelError>(half.level() == levels_.after_coeff_to_slot,
                      "eval_mod: the ciphertext is at level {}; EvalMod starts at level {} (after CoeffToSlot)",
                      half.level(), levels_.after_coeff_to_slot);
  const std::size_t degree = eval_mod_coefficients_.size() - 1;
  const int degree_bits = std::bit_width(degree);
  const std::size_t baby = std::size_t{1} << ((degree_bits + 1) / 2);
  // T_0 .. T_baby, then T_(2 baby), T_(4 baby), ... up to the largest giant.
  std::vector<Ciphertext> powers(std::max(baby, std::bit_floor(degree)) + 1);
  powers[1] = half.clone();
  bring_to(powers[1], half.level());  // checks that CoeffToSlot landed on the chain
  auto power = [&](std::size_t i) {
    if (std::has_single_bit(i)) {
      Ciphertext t = multiply_on_chain(powers[i / 2], powers[i / 2]);  // T_2a = 2 T_a^2 - 1
      evaluator_.multiply_integer_inplace(t, 2);
      evaluator_.sub_inplace(t, 1.0);
      return t;
    }
    const std::size_t a = std::bit_floor(i), b = i - a;  // T_(a+b) = 2 T_a T_b - T_(a-b)
    Ciphertext t = multiply_on_chain(powers[a], powers[b]);
    evaluator_.multiply_integer_inplace(t, 2);
    Ciphertext lower = powers[a - b].clone();
    evaluator_.negate_inplace(lower);
    add_on_chain(t, lower);
    return t;
  };
  for (std::size_t i = 2; i <= baby && i < powers.size(); ++i) powers[i] = power(i);
  for (std::size_t i = 2 * baby; i < powers.size(); i *= 2) powers[i] = power(i);

  Ciphertext y = chebyshev_series(eval_mod_coefficients_, powers, baby);
  for (int step = 0; step < config_.double_angle_steps; ++step) {  // cos 2t = 2 cos^2 t - 1
    y = multiply_on_chain(y, y);
    evaluator_.multiply_integer_inplace(y, 2);
    evaluator_.sub_inplace(y, 1.0);
  }
  bring_to(y, levels_.after_eval_mod);
  return y;
}

}  // namespace cerium::ckks
