#pragma once
// The non-linear layers of encrypted transformers, each a polynomial circuit written over any "ops" object
// (graph::Tracer to plan, graph::Eager to run now, graph::PlainOps for the plaintext twin), with its exact
// function (std:: math), its approximation in doubles (the same arithmetic as forward), the levels it consumes
// (counted by running forward on a depth counter: every product, by a ciphertext, a plaintext or a constant, is
// rescaled and costs one) and its error, measured at construction on a fine grid over the stated range.
//
//  - Exp on [lower, upper]: a Chebyshev interpolant of exp(x / 2^r), then r squarings; degree and r chosen
//    together for the least depth within the tolerance (for [-16, 0] that is r = 0 and degree 15: the squarings
//    pay off only for wider ranges). Absolute error.
//  - Reciprocal on [a, b]: Newton's iteration y <- y (2 - x y) from the best polynomial guess for the relative
//    error (1 - x p(x) is a scaled Chebyshev polynomial), its iterates computed in Goldschmidt's form
//    (y <- y (1 + e), e <- e^2 with e = 1 - x y: one level per iteration rather than two). Relative error.
//  - InverseSqrt on [a, b]: a Chebyshev fit of 1/sqrt(x), then Newton's steps y <- y (alpha - beta x y^2), the
//    coefficients fitted to the range x y^2 still spans (3/2 and 1/2, Newton's own, once it is narrow; from a
//    linear guess on [0.01, 100] they reach 1e-3 in 6 steps where Newton's own take 12). The input is not rescaled
//    first: no constant narrows upper / lower, the fitted steps are what handle a wide range. Two levels a step.
//    Relative error.
//  - Gelu, Silu, Tanh on [-bound, bound]: Chebyshev interpolants; Tanh odd, Gelu and Silu as x / 2 plus an even
//    interpolant pinned to 0 at 0, so that a padding slot's 0 stays 0. Absolute error.
//  - row_sum, row_mean on a RowLayout, Softmax, LayerNorm and RmsNorm over each row's valid features.
//
// Padding (nn/row_layout.hpp): the row layers and Gelu, Silu, Tanh keep a padding slot's 0 at 0. Exp, Reciprocal
// and InverseSqrt are elementwise building blocks: exp(0) is 1 and 0 lies outside a reciprocal's range, so alone
// on a RowLayout multiply their result by layout.mask() (a level). Inputs must lie within the stated ranges: the
// polynomials are only accurate there.
//
// Magnitudes: bootstrapping wants |values| <= 1, and the planner may refresh any value on a layer's longest path,
// so the layers keep those values near [-1, 1] where it costs nothing (normalized iterates, scales folded into
// polynomial coefficients and plaintexts). Left larger: the values returned (the function's own magnitude) and
// one product inside each InverseSqrt step, about sqrt(upper / lower) / 2, consumed by the next product.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cerium/circuits/polynomial.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

namespace nonlinear_detail {

// A value is its depth: the levels consumed since the input.
struct Level {
  int depth = 0;
};

// Runs a circuit to count its levels (graph::level_cost: one per product, none for additions and rotations).
struct DepthOps {
  using Value = Level;
  Value add(Value a, Value b) const { return {std::max(a.depth, b.depth)}; }
  Value sub(Value a, Value b) const { return {std::max(a.depth, b.depth)}; }
  Value negate(Value a) const { return a; }
  Value multiply(Value a, Value b) const { return {std::max(a.depth, b.depth) + 1}; }
  Value multiply(Value a, const graph::PlainVector&) const { return {a.depth + 1}; }
  Value multiply(Value a, double) const { return {a.depth + 1}; }
  Value add(Value a, const graph::PlainVector&) const { return a; }
  Value add(Value a, double) const { return a; }
  Value sub(Value a, double) const { return a; }
  Value rotate(Value a, std::int64_t) const { return a; }
  void label(Value, const std::string&) const {}
};

// One slot in doubles: the elementwise layers' approximate(x) is their forward on it, the same arithmetic.
struct ScalarOps {
  using Value = double;
  Value add(double a, double b) const { return a + b; }
  Value sub(double a, double b) const { return a - b; }
  Value negate(double a) const { return -a; }
  Value multiply(double a, double b) const { return a * b; }
  void label(double, const std::string&) const {}
};

template <class Layer>
int depth_of(const Layer& layer) {
  DepthOps ops;
  return layer.forward(ops, Level{}).depth;
}

template <class Layer>
double scalar_forward(const Layer& layer, double x) {
  ScalarOps ops;
  return layer.forward(ops, x);
}

// The period-`stride` plaintext with `valid` in the valid slots and `padding` in the others.
graph::PlainVector row_pattern(const RowLayout& layout, double valid, double padding);
// The period-`stride` plaintext with `value` at feature 0 and 0 elsewhere.
graph::PlainVector first_feature(const RowLayout& layout, double value);

// Copies slot r * stride of every row onto its slots r * stride + f for f < count (the others stay 0, when they
// were): doubling blocks, then the set bits of count placed one after another.
template <class Ops>
typename Ops::Value replicate(Ops& ops, typename Ops::Value head, std::size_t count) {
  using Value = typename Ops::Value;
  std::vector<Value> blocks;  // blocks[b] covers [0, 2^b)
  blocks.push_back(std::move(head));
  for (std::size_t width = 1; 2 * width <= count; width *= 2) {
    Value doubled = ops.add(blocks.back(), ops.rotate(blocks.back(), -static_cast<std::int64_t>(width)));
    blocks.push_back(std::move(doubled));
  }
  std::optional<Value> out;
  std::size_t offset = 0;
  for (std::size_t b = blocks.size(); b-- > 0;) {
    if ((count >> b & 1U) == 0) continue;
    Value part = offset == 0 ? graph::duplicate(blocks[b])
                             : ops.rotate(blocks[b], -static_cast<std::int64_t>(offset));
    out = out ? ops.add(*out, part) : std::move(part);
    offset += std::size_t{1} << b;
  }
  return std::move(*out);
}

// scale * (the sum of row r's valid slots) in each valid slot of row r. Padding slots (0 on input): 0 when
// clear_padding; otherwise the scaled sum of some `features` consecutive-by-position valid slots (a total of the
// same kind: within the total's range), for a caller that only needs the valid slots and a sane padding.
//  - 2 features <= stride: the window [i - stride/2, i + stride/2) of any valid slot i covers its row's valid slots
//    and no other row's, so log2(stride) rotations give every valid slot its total at once; a mask (scale folded
//    in) clears the padding: one level, none without clear_padding and scale.
//  - otherwise: the window [i, i + stride) gives the total at feature 0; it is kept (scaled: one level) and
//    copied over the row's features (or the whole stride without clear_padding).
template <class Ops>
typename Ops::Value row_total(Ops& ops, const typename Ops::Value& x, const RowLayout& layout, double scale,
                              bool clear_padding) {
  using Value = typename Ops::Value;
  layout.validate();
  const auto stride = static_cast<std::int64_t>(layout.stride);
  if (stride == 1) return scale == 1 ? graph::duplicate(x) : ops.multiply(x, scale);
  Value sum = graph::duplicate(x);
  if (2 * layout.features <= layout.stride) {
    for (std::int64_t step = 1; step < stride / 2; step *= 2) sum = ops.add(sum, ops.rotate(sum, step));
    sum = ops.add(sum, ops.rotate(sum, -stride / 2));
    if (clear_padding) return ops.multiply(sum, row_pattern(layout, scale, 0.0));
    return scale == 1 ? std::move(sum) : ops.multiply(sum, scale);
  }
  for (std::int64_t step = 1; step < stride; step *= 2) sum = ops.add(sum, ops.rotate(sum, step));
  Value head = ops.multiply(sum, first_feature(layout, scale));
  return replicate(ops, std::move(head), clear_padding ? layout.features : layout.stride);
}

}  // namespace nonlinear_detail

// Each valid slot of row r gets sum_f x(r, f); padding slots 0. One level; log2(stride) rotations when
// 2 features <= stride, about twice that otherwise.
template <class Ops>
typename Ops::Value row_sum(Ops& ops, const typename Ops::Value& x, const RowLayout& layout) {
  return nonlinear_detail::row_total(ops, x, layout, 1.0, true);
}

// The same with the mean: 1 / features folded into the mask.
template <class Ops>
typename Ops::Value row_mean(Ops& ops, const typename Ops::Value& x, const RowLayout& layout) {
  return nonlinear_detail::row_total(ops, x, layout, 1.0 / static_cast<double>(layout.features), true);
}

// exp(x) on [lower, upper].
struct ExpConfig {
  // The least input.
  double lower = -16, upper = 0;  // the greatest: the error is relative to exp(upper)
  double tolerance = 1e-6;        // aimed at: max |approximate - exact| / exp(upper)
  int degree = 0;                 // of the interpolant; 0: chosen with the squarings for the least depth
  int squarings = -1;             // r; -1: chosen
  double scale = 1;               // computes scale * exp(x) (folded into the coefficients: free)
};

// exp on [lower, upper] (the header comment): a Chebyshev interpolant of exp(x / 2^r), then r squarings.
class Exp {
 public:
  // Chooses the degree and r the config leaves open and measures the error. InvalidArgument for a bad range,
  // tolerance, scale or choice, or when no choice reaches the tolerance.
  explicit Exp(const ExpConfig& config = {});

  // scale exp(x) on any ops.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    typename Ops::Value y = graph::evaluate(ops, x, polynomial_);  // scale^(1/2^r) exp(x / 2^r)
    for (int i = 0; i < squarings_; ++i) y = ops.multiply(y, y);
    ops.label(y, "exp");
    return y;
  }
  // The function and the approximation in doubles (forward's arithmetic); the levels forward consumes; the
  // interpolant's degree, r, and the config it was built from.
  double exact(double x) const { return config_.scale * std::exp(x); }
  double approximate(double x) const { return nonlinear_detail::scalar_forward(*this, x); }
  int depth() const { return depth_; }
  double max_error() const { return max_error_; }  // absolute, on [lower, upper]
  int degree() const { return static_cast<int>(polynomial_.degree()); }
  int squarings() const { return squarings_; }
  const ExpConfig& config() const { return config_; }

 private:
  Exp(const ExpConfig& config, int degree, int squarings);

  ExpConfig config_;
  circuits::Polynomial polynomial_;
  int squarings_ = 0;
  int depth_ = 0;
  double max_error_ = 0;
};

// 1 / x on [lower, upper], 0 < lower < upper.
struct ReciprocalConfig {
  // The least input.
  double lower = 1, upper = 64;  // the greatest
  double tolerance = 1e-6;       // aimed at: max |x approximate(x) - 1| (relative)
  int guess_degree = 0;          // of the initial polynomial; 0: chosen with the iterations for the least depth
  int iterations = -1;           // Newton's; -1: the fewest within the tolerance
  double scale = 1;              // computes scale / x (folded into the guess: free)
};

// 1 / x on [lower, upper] (the header comment): a polynomial guess, then Newton's iterations in Goldschmidt's form.
class Reciprocal {
 public:
  // Chooses the guess's degree and the iterations the config leaves open and measures the error. InvalidArgument
  // for a bad range, tolerance, scale or choice, or when no choice reaches the tolerance.
  explicit Reciprocal(const ReciprocalConfig& config = {});

  // y0 = p(x), e0 = 1 - x p(x) (as its own polynomial where that is shallower than from y0: then x is not read
  // again), then y <- y + y e, e <- e^2: after k steps 1 - x y = e0^(2^k).
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    using Value = typename Ops::Value;
    std::vector<Value> y;
    y.push_back(graph::evaluate(ops, x, guess_));
    if (iterations_ > 0) {
      Value e = error_ ? graph::evaluate(ops, x, *error_)
                       : ops.add(ops.negate(ops.multiply(scaled(ops, x), y.front())), 1.0);
      iterate(ops, std::move(e), y, iterations_);
    }
    ops.label(y.front(), "reciprocal");
    return std::move(y.front());
  }
  // Each of `targets` times scale / x, the iterations run on the targets themselves: t <- t p(x) and
  // e = 1 - x p(x) / scale from the guess as computed, then t <- t (1 + e), e <- e^2 (at least once). Whatever
  // error the guess carries, a bootstrap's inside it included, e measures and the iterations remove, so only x
  // must be exact: mark it (graph::keep_exact) where the planner might otherwise bootstrap it. No more levels
  // than forward and a product (one fewer where forward computes e from y).
  template <class Ops>
  void multiply_inverse(Ops& ops, const typename Ops::Value& x, std::vector<typename Ops::Value>& targets) const {
    using Value = typename Ops::Value;
    const Value guess = graph::evaluate(ops, x, guess_);
    const Value x_scaled = scaled(ops, x);
    graph::keep_exact(ops, x_scaled, std::span<const Value>(&x, 1));
    for (Value& t : targets) t = ops.multiply(t, guess);
    iterate(ops, ops.add(ops.negate(ops.multiply(x_scaled, guess)), 1.0), targets, std::max(iterations_, 1));
  }
  // The function and the approximation in doubles (forward's arithmetic); the levels forward consumes; the
  // guess's degree, the iterations, and the config it was built from.
  double exact(double x) const { return config_.scale / x; }
  double approximate(double x) const { return nonlinear_detail::scalar_forward(*this, x); }
  int depth() const { return depth_; }
  double max_error() const { return max_error_; }  // relative: max |approximate / exact - 1| on [lower, upper]
  int guess_degree() const { return static_cast<int>(guess_.degree()); }
  int iterations() const { return iterations_; }
  const ReciprocalConfig& config() const { return config_; }

 private:
  Reciprocal(const ReciprocalConfig& config, int guess_degree, int iterations);
  // Newton's steps in Goldschmidt's form on every target: t <- t (1 + e), e <- e^2, `iterations` times.
  template <class Ops>
  static void iterate(Ops& ops, typename Ops::Value e, std::vector<typename Ops::Value>& targets, int iterations) {
    for (int i = 0; i < iterations; ++i) {
      for (auto& t : targets) t = ops.add(t, ops.multiply(t, e));
      if (i + 1 < iterations) e = ops.multiply(e, e);
    }
  }
  // x / scale (x itself at scale 1), for e = 1 - (x / scale) y.
  template <class Ops>
  typename Ops::Value scaled(Ops& ops, const typename Ops::Value& x) const {
    return config_.scale == 1 ? graph::duplicate(x) : ops.multiply(x, 1.0 / config_.scale);
  }

  ReciprocalConfig config_;
  circuits::Polynomial guess_;                 // scale p(x)
  std::optional<circuits::Polynomial> error_;  // 1 - x p(x), when evaluated directly
  int iterations_ = 0;
  int depth_ = 0;
  double max_error_ = 0;
};

// 1 / sqrt(x) on [lower, upper], 0 < lower < upper.
struct InverseSqrtConfig {
  // The least input.
  double lower = 0.01, upper = 100;  // the greatest
  double tolerance = 1e-4;           // aimed at: max |approximate(x) sqrt(x) - 1| (relative)
  int guess_degree = 0;              // of the Chebyshev fit; 0: chosen with the iterations for the least depth
  int iterations = -1;               // Newton's; -1: the fewest within the tolerance
  double scale = 1;                  // computes scale / sqrt(x) (folded into the last step: free)
};

// 1 / sqrt(x) on [lower, upper] (the header comment): a Chebyshev guess, then fitted Newton steps.
class InverseSqrt {
 public:
  // Chooses the guess's degree and the steps the config leaves open and measures the error. InvalidArgument for
  // a bad range, tolerance, scale or choice, or when no choice reaches the tolerance.
  explicit InverseSqrt(const InverseSqrtConfig& config = {});

  // The iterate is kept as z = sqrt(lower) y (within about [sqrt(lower / upper), 1]); a step is
  // z <- alpha z - ((beta / lower) x z) z^2: two levels. The last one returns scale y.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    using Value = typename Ops::Value;
    Value z = graph::evaluate(ops, x, guess_);
    for (const Step& step : steps_) {
      Value square = ops.multiply(z, z);
      Value scaled = ops.multiply(ops.multiply(x, step.x_factor), z);
      z = ops.sub(ops.multiply(z, step.alpha), ops.multiply(square, scaled));
    }
    ops.label(z, "inverse_sqrt");
    return z;
  }
  // The function and the approximation in doubles (forward's arithmetic); the levels forward consumes; the
  // guess's degree, the steps, and the config it was built from.
  double exact(double x) const { return config_.scale / std::sqrt(x); }
  double approximate(double x) const { return nonlinear_detail::scalar_forward(*this, x); }
  int depth() const { return depth_; }
  double max_error() const { return max_error_; }  // relative: max |approximate / exact - 1| on [lower, upper]
  int guess_degree() const { return static_cast<int>(guess_.degree()); }
  int iterations() const { return static_cast<int>(steps_.size()); }
  const InverseSqrtConfig& config() const { return config_; }

 private:
  struct Step {
    double alpha = 1.5, x_factor = 0.5;  // z <- alpha z - x_factor x z^3
  };
  InverseSqrt(const InverseSqrtConfig& config, int guess_degree, int max_iterations);

  InverseSqrtConfig config_;
  circuits::Polynomial guess_;
  std::vector<Step> steps_;
  int depth_ = 0;
  double max_error_ = 0;
};

// An activation on [-bound, bound] as one Chebyshev interpolant (plus x / 2 for Gelu and Silu).
struct ActivationConfig {
  double bound = 8;  // the range is [-bound, bound]
  int degree = 31;   // Tanh uses the odd powers up to it, Gelu and Silu the even ones (with x / 2)
};

// The activations of the header comment: one interpolant, and x / 2 for Gelu and Silu.
class PolynomialActivation {
 public:
  // The activation on any ops, its result labelled with the activation's name.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    typename Ops::Value y = graph::evaluate(ops, x, polynomial_);
    if (linear_ != 0) y = ops.add(y, ops.multiply(x, linear_));
    ops.label(y, name_);
    return y;
  }
  // The function and the approximation in doubles (forward's arithmetic); the levels forward consumes; the
  // interpolant's degree, and the config it was built from.
  double exact(double x) const { return exact_(x); }
  double approximate(double x) const { return nonlinear_detail::scalar_forward(*this, x); }
  int depth() const { return depth_; }
  double max_error() const { return max_error_; }  // absolute, on [-bound, bound]
  int degree() const { return static_cast<int>(polynomial_.degree()); }
  const ActivationConfig& config() const { return config_; }

 protected:
  // odd: odd powers alone (Tanh); half_x_plus_even: x / 2 plus even powers, 0 at 0 (Gelu, Silu).
  enum class Form { odd, half_x_plus_even };
  // name: the label; exact: the function. InvalidArgument for a bound that is not positive or a degree outside
  // [2, 255].
  PolynomialActivation(const char* name, double (*exact)(double), Form form, const ActivationConfig& config);

 private:
  std::string name_;
  double (*exact_)(double) = nullptr;
  ActivationConfig config_;
  circuits::Polynomial polynomial_;
  double linear_ = 0;
  int depth_ = 0;
  double max_error_ = 0;
};

// 0.5 x (1 + erf(x / sqrt 2)) = x / 2 + (x / 2) erf(x / sqrt 2), the second part even.
class Gelu : public PolynomialActivation {
 public:
  // Default: [-8, 8], degree 28.
  explicit Gelu(const ActivationConfig& config = {8, 28});
};

// x sigmoid(x) = x / 2 + (x / 2) tanh(x / 2), the second part even.
class Silu : public PolynomialActivation {
 public:
  // Default: [-8, 8], degree 28.
  explicit Silu(const ActivationConfig& config = {8, 28});
};

// tanh(x), odd.
class Tanh : public PolynomialActivation {
 public:
  // Default: [-8, 8], degree 55.
  explicit Tanh(const ActivationConfig& config = {8, 55});
};

// Softmax over each row's valid features, for inputs within [lower, upper].
struct SoftmaxConfig {
  // The least input.
  double lower = -4, upper = 4;  // the greatest
  double tolerance = 1e-4;       // aimed at: absolute, on the outputs
};

// exp(x - upper) / features (each term within [exp(lower - upper), 1] / features), its row totals t (within
// [exp(lower - upper), 1] in every slot, padding included), then e exp(upper - lower) times
// exp(lower - upper) / t by a Reciprocal on [exp(lower - upper), 1]: every value on the long path stays within
// [0, 1] (e exp(upper - lower) is formed beside it, at exp's level). Padding: moved into the range before exp (a
// plaintext add), its exp cancelled after (another): no level. Depth: Exp's + Reciprocal's + 1 (+ 1 when
// 2 features > stride): 16 for [-2, 2] and 19 for [-4, 4] with 12 features in a stride of 16. The reciprocal's
// range spans exp(upper - lower): a tight input bound is what keeps it cheap.
class Softmax {
 public:
  // Builds its Exp and Reciprocal for the range and measures the error. InvalidArgument for a bad layout, range or
  // tolerance.
  Softmax(const RowLayout& layout, const SoftmaxConfig& config = {});

  // The pipeline above on any ops.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    using Value = typename Ops::Value;
    Value shifted = ops.sub(ops.add(x, padding_to_upper_), config_.upper);
    Value e = ops.add(exp_.forward(ops, shifted), cancel_padding_);
    Value total = nonlinear_detail::row_total(ops, e, layout_, 1.0, false);
    Value numerator = ops.multiply(e, std::exp(config_.upper - config_.lower));
    Value y = ops.multiply(numerator, reciprocal_.forward(ops, total));
    ops.label(y, "softmax");
    return y;
  }
  // On slot vectors of whole rows (layout.slots() values for the layout's ciphertexts; any multiple of the stride),
  // padding 0 and kept 0.
  std::vector<double> exact(const std::vector<double>& slots) const;
  std::vector<double> approximate(const std::vector<double>& slots) const;
  // The levels forward consumes.
  int depth() const { return depth_; }
  // Absolute, measured on pseudo-random rows over [lower, upper] (fixed seed) and the extreme rows.
  double max_error() const { return max_error_; }
  // Its pieces, the layout and the config it was built from.
  const Exp& exp() const { return exp_; }
  const Reciprocal& reciprocal() const { return reciprocal_; }
  const RowLayout& layout() const { return layout_; }
  const SoftmaxConfig& config() const { return config_; }

 private:
  RowLayout layout_;
  SoftmaxConfig config_;
  Exp exp_;
  Reciprocal reciprocal_;
  graph::PlainVector padding_to_upper_, cancel_padding_;
  int depth_ = 0;
  double max_error_ = 0;
};

// y = gamma (x - mean) / sqrt(var + eps) + beta over each row's valid features.
struct LayerNormConfig {
  // The scale gamma (beta: the shift).
  std::vector<double> gamma = {}, beta = {};  // features values each; empty: ones and zeros
  double eps = 1e-5;                          // added to the variance
  // The least variance (variance_upper: the greatest) the InverseSqrt is made for.
  double variance_lower = 0.01, variance_upper = 100;  // the rows' variances the model produces
  double tolerance = 1e-4;                             // aimed at: the inverse square root's relative error
};

// y = gamma x / sqrt(mean(x^2) + eps) over each row's valid features.
struct RmsNormConfig {
  std::vector<double> gamma = {};  // features values; empty: ones
  // eps, added to the mean square; the mean squares the model produces, which the InverseSqrt is made for; the
  // InverseSqrt's relative error aimed at.
  double eps = 1e-5;
  double mean_square_lower = 0.01, mean_square_upper = 100;
  double tolerance = 1e-4;
};

// Both: the statistic (its 1 / (features V) folded into the row mask, V its upper bound plus eps, so the
// InverseSqrt sees [(lower + eps) / V, 1]), padding moved into that range by the plaintext that adds eps / V,
// InverseSqrt with scale sqrt of its lower end (values within [0, 1]); gamma times the rest folded into one
// plaintext product on the (centered) input, computed beside the statistic.
// Depth: LayerNorm 4 + InverseSqrt's (mean, centered square, variance; the product), RmsNorm 3 + InverseSqrt's.
class LayerNorm {
 public:
  // Builds its InverseSqrt for the range and measures the error. InvalidArgument for a bad layout or range, fewer
  // than 2 features, or gamma or beta of another length.
  LayerNorm(const RowLayout& layout, const LayerNormConfig& config);

  // The normalization on any ops.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    using Value = typename Ops::Value;
    Value centered = ops.sub(x, row_mean(ops, x, layout_));
    Value variance = nonlinear_detail::row_total(ops, ops.multiply(centered, centered), layout_, statistic_scale_, true);
    Value inverse = inverse_sqrt_.forward(ops, ops.add(variance, eps_and_padding_));
    Value y = ops.multiply(ops.multiply(centered, gamma_), inverse);
    if (!beta_.empty()) y = ops.add(y, beta_);
    ops.label(y, "layer_norm");
    return y;
  }
  // On slot vectors of whole rows (any multiple of the stride), padding 0 and kept 0: exact, and the approximation
  // in doubles; the levels forward consumes.
  std::vector<double> exact(const std::vector<double>& slots) const;
  std::vector<double> approximate(const std::vector<double>& slots) const;
  int depth() const { return depth_; }
  // Absolute, measured on pseudo-random rows (fixed seed) whose variances span the range.
  double max_error() const { return max_error_; }
  // Its InverseSqrt, the layout and the config it was built from.
  const InverseSqrt& inverse_sqrt() const { return inverse_sqrt_; }
  const RowLayout& layout() const { return layout_; }
  const LayerNormConfig& config() const { return config_; }

 private:
  RowLayout layout_;
  LayerNormConfig config_;
  double statistic_scale_ = 1;
  InverseSqrt inverse_sqrt_;
  graph::PlainVector eps_and_padding_, gamma_, beta_;
  int depth_ = 0;
  double max_error_ = 0;
};

// RMSNorm over each row's valid features (see LayerNorm for how).
class RmsNorm {
 public:
  // Builds its InverseSqrt for the range and measures the error. InvalidArgument for a bad layout or range, or
  // gamma of another length.
  RmsNorm(const RowLayout& layout, const RmsNormConfig& config);

  // The normalization on any ops.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x) const {
    using Value = typename Ops::Value;
    Value mean_square = nonlinear_detail::row_total(ops, ops.multiply(x, x), layout_, statistic_scale_, true);
    Value inverse = inverse_sqrt_.forward(ops, ops.add(mean_square, eps_and_padding_));
    Value y = ops.multiply(ops.multiply(x, gamma_), inverse);
    ops.label(y, "rms_norm");
    return y;
  }
  // On slot vectors of whole rows (any multiple of the stride), padding 0 and kept 0: exact, and the approximation
  // in doubles; the levels forward consumes; its InverseSqrt, the layout and the config it was built from.
  std::vector<double> exact(const std::vector<double>& slots) const;
  std::vector<double> approximate(const std::vector<double>& slots) const;
  int depth() const { return depth_; }
  double max_error() const { return max_error_; }  // as LayerNorm's
  const InverseSqrt& inverse_sqrt() const { return inverse_sqrt_; }
  const RowLayout& layout() const { return layout_; }
  const RmsNormConfig& config() const { return config_; }

 private:
  RowLayout layout_;
  RmsNormConfig config_;
  double statistic_scale_ = 1;
  InverseSqrt inverse_sqrt_;
  graph::PlainVector eps_and_padding_, gamma_;
  int depth_ = 0;
  double max_error_ = 0;
};

}  // namespace cerium::nn
