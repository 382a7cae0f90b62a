#pragma once
// Polynomial evaluation on ciphertexts, baby-step giant-step (Paterson-Stockmeyer with the degree split at powers
// of two), every intermediate on one scale chain (circuits/scale_chain.hpp), and a simulation of the same
// sequence that gives levels, scales and counts before anything runs.
//
// Powers: P_1 = x, P_2 .. P_k (k = baby, a power of two about sqrt(degree)), then P_2k, P_4k, ... up to the largest
// giant. Chebyshev: T_2a = 2 T_a^2 - 1, T_(a+b) = 2 T_a T_b - T_(a-b) (a the largest power of two below a + b);
// power basis: x^2a = (x^a)^2, x^(a+b) = x^a x^b. For an odd or even polynomial only the powers of its parity (and
// the powers of two the giants need) are made.
// Series: p = q + P_G r for the largest power of two G <= deg p, recursively, until the degree is below k; then
// the leaves sum_(i<k) c_i P_i have all their products by constants encoded so that every term lands on
// Delta_(l-1) P_l: one sum, one rescale, and the result is on the chain. The split, Chebyshev:
// r_0 = c_G, r_i = 2 c_(G+i), q_(G-i) = c_(G-i) - c_(G+i) (from T_G T_i = (T_(G+i) + T_(G-i)) / 2); power basis:
// r_i = c_(G+i), q = c_0 .. c_(G-1).
//
//   circuits::PolynomialEvaluator sign(circuits::Polynomial::chebyshev_interpolant(f, 27, -1, 1));
//   auto shape = sign.simulate(evaluator, ct.level(), ct.scale());   // levels, scale and products, no work
//   ckks::Ciphertext y = sign.evaluate(evaluator, ct);

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "cerium/backend/backend.hpp"
#include "cerium/circuits/polynomial.hpp"
#include "cerium/circuits/scale_chain.hpp"
#include "cerium/circuits/scaled_constant.hpp"
#include "cerium/ckks/ciphertext.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/scale.hpp"
#include "cerium/core/check.hpp"

namespace cerium::circuits {

// How the evaluation splits the powers.
struct PolynomialEvaluatorConfig {
  std::size_t baby = 0;  // baby steps k, a power of two; 0: 2^ceil(bit_width(degree) / 2)
};

// What an evaluation does, from simulate().
struct PolynomialShape {
  int input_level = 0;             // where x is
  int output_level = 0;            // where p(x) is: input_level - depth
  double output_scale = 0;         // p(x)'s scale
  int depth = 0;                   // input_level - output_level
  int ciphertext_products = 0;     // relinearized and rescaled, one key switch each
  int constant_products = 0;       // per-limb scalar products
  int rescales = 0;                // all of them, the products' included
};

namespace polynomial_detail {

// The evaluation as a sequence of value operations, run on ciphertexts (Run) or on (level, scale) pairs (Simulate).
template <class Ops>
class Series {
 public:
  using Value = typename Ops::Value;

  Series(Ops& ops, const Polynomial& p, std::size_t baby) : ops_(ops), p_(p), parity_(p.parity()) {
    const std::size_t degree = p.degree();
    const int degree_bits = std::bit_width(degree);
    baby_ = baby != 0 ? baby : std::size_t{1} << ((degree_bits + 1) / 2);
    require(std::has_single_bit(baby_) && baby_ >= 2, "polynomial: baby steps = {} must be a power of two >= 2",
            baby_);
  }

  // x on the chain at its level -> p(x) on the chain.
  Value run(const Value& x) {
    const std::size_t degree = p_.degree();
    powers_.clear();
    powers_.resize(std::max(baby_, std::bit_floor(degree)) + 1);
    powers_[1] = ops_.clone(x);
    ops_.bring_to(*powers_[1], ops_.level(x));  // checks that x is on the chain
    for (std::size_t i = 2; i <= baby_ && i < powers_.size(); ++i)
      if (needed(i)) powers_[i] = power(i);
    for (std::size_t i = 2 * baby_; i < powers_.size(); i *= 2) powers_[i] = power(i);
    return series(p_.coefficients);
  }

 private:
  bool needed(std::size_t i) const {
    if (std::has_single_bit(i) || parity_ == Parity::none) return true;
    return (i % 2 == 1) == (parity_ == Parity::odd);
  }

  const Value& at(std::size_t i) const {
    require(i < powers_.size() && powers_[i].has_value(), "polynomial (internal): power {} was not made", i);
    return *powers_[i];
  }

  Value power(std::size_t i) {
    const bool chebyshev = p_.basis == PolynomialBasis::chebyshev;
    if (std::has_single_bit(i)) {
      Value t = ops_.multiply(at(i / 2), at(i / 2));
      if (chebyshev) {  // T_2a = 2 T_a^2 - 1
        ops_.multiply_integer(t, 2);
        ops_.add_constant(t, -1.0);
      }
      return t;
    }
    const std::size_t a = std::bit_floor(i), b = i - a;
    Value t = ops_.multiply(at(a), at(b));
    if (chebyshev) {  // T_(a+b) = 2 T_a T_b - T_(a-b)
      ops_.multiply_integer(t, 2);
      Value lower = ops_.clone(at(a - b));
      ops_.negate(lower);
      ops_.add(t, lower);
    }
    return t;
  }

  Value series(std::vector<double> c) {
    if (c.size() <= baby_) return leaves(c);
    const std::size_t degree = c.size() - 1;
    const std::size_t giant = std::bit_floor(degree);
    std::vector<double> r(degree - giant + 1);
    if (p_.basis == PolynomialBasis::chebyshev) {
      r[0] = c[giant];
      for (std::size_t i = 1; i < r.size(); ++i) {
        r[i] = 2 * c[giant + i];
        c[giant - i] -= c[giant + i];
      }
    } else {
      for (std::size_t i = 0; i < r.size(); ++i) r[i] = c[giant + i];
    }
    c.resize(giant);
    Value high = ops_.multiply(at(giant), series(std::move(r)));
    ops_.add(high, series(std::move(c)));
    return high;
  }

  // All terms meet at the lowest level among the powers used, each constant encoded so that every product has
  // the scale Delta_(l-1) P_l: one sum, one rescale, and the result is on the chain.
  Value leaves(const std::vector<double>& c) {
    int level = ops_.level(at(1));
    for (std::size_t i = 1; i < c.size(); ++i)
      if (powers_[i].has_value()) level = std::min(level, ops_.level(*powers_[i]));
    const double product_scale = ops_.chain().at(level - 1) * ops_.level_prime_product(level);
    std::optional<Value> sum;
    for (std::size_t i = 1; i < c.size(); ++i) {
      if (c[i] == 0) continue;
      Value term = ops_.level_down(at(i), level);
      ops_.multiply_constant_at_scale(term, c[i], product_scale / ops_.scale(term));
      ops_.set_scale(term, product_scale);  // equal to the product of the two scales up to rounding of doubles
      if (!sum) {
        sum = std::move(term);
      } else {
        ops_.add_same_level(*sum, term);
      }
    }
    if (!sum) {  // a constant polynomial: 0 P_1 + c_0
      sum = ops_.level_down(at(1), level);
      ops_.multiply_constant_at_scale(*sum, 0.0, product_scale / ops_.scale(*sum));
      ops_.set_scale(*sum, product_scale);
    }
    ops_.rescale(*sum);
    ops_.add_constant(*sum, c.empty() ? 0.0 : c[0]);
    return std::move(*sum);
  }

  Ops& ops_;
  const Polynomial& p_;
  Parity parity_;
  std::size_t baby_ = 2;
  std::vector<std::optional<Value>> powers_;
};

// The operations on ciphertexts.
template <backend::PolyBackend B>
struct Run {
  using Value = ckks::Ciphertext;
  const ckks::BasicEvaluator<B>& ev;
  const ScaleChain& chain_ref;

  const ScaleChain& chain() const { return chain_ref; }
  double level_prime_product(int level) const { return ev.level_prime_product(level); }
  static int level(const Value& v) { return v.level(); }
  static double scale(const Value& v) { return v.scale(); }
  static void set_scale(Value& v, double s) { v.set_scale(s); }
  static Value clone(const Value& v) { return v.clone(); }
  void bring_to(Value& v, int level) const { chain_ref.bring_to(ev, v, level); }
  Value multiply(const Value& a, const Value& b) const { return chain_ref.multiply(ev, a, b); }
  void add(Value& a, const Value& b) const { chain_ref.add(ev, a, b); }
  void add_same_level(Value& a, const Value& b) const { ev.add_inplace(a, b); }
  void multiply_integer(Value& v, std::int64_t k) const { ev.multiply_integer_inplace(v, k); }
  void add_constant(Value& v, double c) const { ev.add_inplace(v, c); }
  void negate(Value& v) const { ev.negate_inplace(v); }
  Value level_down(const Value& v, int level) const { return ev.level_down(v, level); }
  void multiply_constant_at_scale(Value& v, double c, double encoding) const {
    circuits::multiply_constant_at_scale(ev, v, c, encoding);
  }
  void rescale(Value& v) const { ev.rescale_inplace(v); }
};

// The same operations on (level, scale), counting what they would do; LevelError where the evaluator would run
// out of levels.
struct SimulatedValue {
  int level = 0;
  double scale = 0;
};

struct Simulate {
  using Value = SimulatedValue;
  const ScaleChain& chain_ref;
  const std::vector<double>& products;  // P_l by level
  PolynomialShape& shape;

  const ScaleChain& chain() const { return chain_ref; }
  double level_prime_product(int level) const {
    require<LevelError>(level >= 1, "polynomial: the evaluation needs more levels than the input has (it reaches "
                                    "level 0 with a product left); bring the input higher or lower the degree");
    return products.at(static_cast<std::size_t>(level));
  }
  static int level(const Value& v) { return v.level; }
  static double scale(const Value& v) { return v.scale; }
  static void set_scale(Value& v, double s) { v.scale = s; }
  static Value clone(const Value& v) { return v; }
  void bring_to(Value& v, int level) const {
    const double target = chain_ref.at(level);
    require<LevelError>(v.level >= level && (v.level > level || ckks::scales_match(v.scale, target)),
                        "polynomial: a value at level {} with scale {} cannot be brought onto the chain at level {}",
                        v.level, ckks::format_scale(v.scale), level);
    v = {level, target};
  }
  Value multiply(const Value& a, const Value& b) const {
    const int level = std::min(a.level, b.level);
    Value x = a, y = b;
    bring_to(x, level);
    bring_to(y, level);
    ++shape.ciphertext_products;
    ++shape.rescales;
    return {level - 1, x.scale * y.scale / level_prime_product(level)};
  }
  void add(Value& a, const Value& b) const {
    const int level = std::min(a.level, b.level);
    bring_to(a, level);
  }
  static void add_same_level(Value&, const Value&) {}
  static void multiply_integer(Value&, std::int64_t) {}
  static void add_constant(Value&, double) {}
  static void negate(Value&) {}
  static Value level_down(const Value& v, int level) { return {level, v.scale}; }
  void multiply_constant_at_scale(Value& v, double, double encoding) const {
    (void)level_prime_product(v.level);  // a level to rescale the constant's scale away
    ++shape.constant_products;
    v.scale *= encoding;
  }
  void rescale(Value& v) const {
    v.scale /= level_prime_product(v.level);
    --v.level;
    ++shape.rescales;
  }
};

}  // namespace polynomial_detail

// A polynomial ready to evaluate on ciphertexts (see the file comment), with simulate() for levels and scales.
class PolynomialEvaluator {
 public:
  PolynomialEvaluator() = default;  // empty: evaluate throws until one is assigned
  // Checks the polynomial: at least c_0 and c_1, finite coefficients, and a finite Chebyshev interval.
  explicit PolynomialEvaluator(Polynomial polynomial, PolynomialEvaluatorConfig config = {})
      : p_(std::move(polynomial)), config_(config) {
    require(p_.coefficients.size() >= 2, "polynomial: {} coefficients; give at least c_0 and c_1",
            p_.coefficients.size());
    for (const double c : p_.coefficients)
      require(std::isfinite(c), "polynomial: coefficient {} is not finite", c);
    require(p_.basis != PolynomialBasis::chebyshev || (std::isfinite(p_.lower) && std::isfinite(p_.upper) &&
                                                       p_.lower < p_.upper),
            "polynomial: the interval [{}, {}] must be finite with lower < upper", p_.lower, p_.upper);
  }

  const Polynomial& polynomial() const { return p_; }  // as given

  // p(x): the Chebyshev interval mapped onto [-1, 1] first (a level) where it is not [-1, 1], then the series on
  // the chain descending from the (mapped) input's level and scale. The result is on that chain.
  template <backend::PolyBackend B>
  ckks::Ciphertext evaluate(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& x) const {
    require(x.size() == 2, "polynomial: the input has {} parts; relinearize it first", x.size());
    ckks::Ciphertext t = p_.maps_interval() ? map_interval(ev, x) : x.clone();
    const ScaleChain chain = ScaleChain::descending(ev, t.level(), t.scale());
    return run(ev, t, chain);
  }

  // p(x) on a given chain (x on it at its level; the interval must be [-1, 1]): how bootstrapping's EvalMod runs
  // its series on a chain anchored at its output.
  template <backend::PolyBackend B>
  ckks::Ciphertext evaluate(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& x,
                            const ScaleChain& chain) const {
    require(!p_.maps_interval(),
            "polynomial: a Chebyshev interval [{}, {}] other than [-1, 1] on a given chain; fold the map into the "
            "input", p_.lower, p_.upper);
    require(x.size() == 2, "polynomial: the input has {} parts; relinearize it first", x.size());
    return run(ev, x, chain);
  }

  // What evaluate(ev, x) does for an x at (level, scale), without running it: LevelError when the levels do not
  // suffice, naming what is missing.
  template <backend::PolyBackend B>
  PolynomialShape simulate(const ckks::BasicEvaluator<B>& ev, int level, double scale) const {
    require<LevelError>(level >= 0 && level <= ev.context()->max_level(), "polynomial: level {} is outside 0..{}",
                        level, ev.context()->max_level());
    std::vector<double> products(static_cast<std::size_t>(level) + 1, 1.0);
    for (int l = 1; l <= level; ++l) products[static_cast<std::size_t>(l)] = ev.level_prime_product(l);
    PolynomialShape shape;
    shape.input_level = level;
    polynomial_detail::SimulatedValue x{level, scale};
    if (p_.maps_interval()) {
      require<LevelError>(level >= 1, "polynomial: mapping [{}, {}] onto [-1, 1] needs a level and the input is "
                                      "at level 0", p_.lower, p_.upper);
      x = {level - 1, scale};
      ++shape.constant_products;
      ++shape.rescales;
    }
    const ScaleChain chain = ScaleChain::descending(products, x.level, x.scale);
    polynomial_detail::Simulate ops{chain, products, shape};
    polynomial_detail::Series<polynomial_detail::Simulate> series(ops, p_, config_.baby);
    const auto out = series.run(x);
    shape.output_level = out.level;
    shape.output_scale = out.scale;
    shape.depth = level - out.level;
    return shape;
  }

 private:
  template <backend::PolyBackend B>
  ckks::Ciphertext run(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& x, const ScaleChain& chain) const {
    require(p_.coefficients.size() >= 2, "polynomial: the evaluator holds no polynomial");
    polynomial_detail::Run<B> ops{ev, chain};
    polynomial_detail::Series<polynomial_detail::Run<B>> series(ops, p_, config_.baby);
    return series.run(x);
  }

  // t = alpha x + beta, alpha = 2 / (upper - lower), beta = -(upper + lower) / (upper - lower): the constant
  // product at P_l and its rescale keep x's scale.
  template <backend::PolyBackend B>
  ckks::Ciphertext map_interval(const ckks::BasicEvaluator<B>& ev, const ckks::Ciphertext& x) const {
    require<LevelError>(x.level() >= 1, "polynomial: mapping [{}, {}] onto [-1, 1] needs a level and the input is "
                                        "at level 0", p_.lower, p_.upper);
    const double width = p_.upper - p_.lower;
    ckks::Ciphertext t = ev.multiply(x, 2.0 / width);
    ev.rescale_inplace(t);
    ev.add_inplace(t, -(p_.upper + p_.lower) / width);
    return t;
  }

  Polynomial p_;
  PolynomialEvaluatorConfig config_;
};

}  // namespace cerium::circuits
