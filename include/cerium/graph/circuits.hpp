#pragma once
// Circuits written over any "ops" object (graph::Tracer, graph::Eager, or a plaintext twin), so that a model's
// activations and matrix products trace into its program graph: the planner then places their levels and
// bootstraps with the rest, and hoists the rotations that share a source.
//
//  - evaluate(ops, x, polynomial): a Chebyshev or power-basis polynomial (circuits::Polynomial) by baby steps
//    T_1 .. T_m and giant steps T_m, T_2m, T_4m, ... (Paterson-Stockmeyer), zero coefficients skipped (odd/even
//    polynomials build what they use); depth about ceil(log2(degree + 1)) + 1, plus one for an interval other
//    than [-1, 1].
//  - multiply(ops, x, matrix): y = M x for a circuits::DiagonalMatrix by baby-step giant-step (circuits::plan_bsgs):
//    sum_g R^g (sum_b diag'_(g,b) R^b x), the diagonals as graph::PlainVectors (a compressed diagonal stays its
//    period); one level. prepare_product(matrix) makes the plan and the plaintexts once, for a matrix that
//    multiplies several ciphertexts (graph::BsgsProduct).
// circuits::PolynomialEvaluator and circuits::LinearTransform are the eager forms, tuned for one evaluator
// (their own scale handling, fused passes); these are the forms a program graph plans.

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <type_traits>
#include <vector>

#include "cerium/circuits/bsgs.hpp"
#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/circuits/polynomial.hpp"
#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::graph {

// A value of any ops object duplicated: traced values and slot vectors copy, ciphertexts clone.
template <class V>
V duplicate(const V& v) {
  if constexpr (std::is_copy_constructible_v<V>) {
    return v;
  } else {
    return v.clone();
  }
}

// Asks the planner never to bootstrap x nor any value between `from` and x (Tracer::keep_exact); nothing on ops
// that run at once. For a value that must stay exact relative to each slot's own size: a denominator whose slots
// span a wide range, read where a bootstrap's absolute error would be a large relative one.
template <class Ops>
void keep_exact(Ops& ops, const typename Ops::Value& x, std::span<const typename Ops::Value> from) {
  if constexpr (requires { ops.keep_exact(x, from); }) ops.keep_exact(x, from);
}

// Asks the planner to bootstrap x, and every value between `from` and x, precisely wherever it refreshes one
// (Tracer::bootstrap_precisely: two bootstraps, the second taking out the first's error, about 2^-10 of it);
// nothing on ops that run at once. For values whose small slots matter relative to their own size (a row's
// softmax weights where other rows of the ciphertext hold much larger ones) and that cannot stay exact.
template <class Ops>
void bootstrap_precisely(Ops& ops, const typename Ops::Value& x, std::span<const typename Ops::Value> from) {
  if constexpr (requires { ops.bootstrap_precisely(x, from); }) ops.bootstrap_precisely(x, from);
}

// sum_i a[i] b[i] over ciphertext pairs with one relinearization for the whole sum (Tracer::product_sum), on ops
// that have it; the products one by one, added, on the others. For dot products whose terms are summed anyway (an
// attention's weighted values): one key switch instead of one a term.
template <class Ops>
typename Ops::Value product_sum(Ops& ops, std::span<const typename Ops::Value> a,
                               std::span<const typename Ops::Value> b) {
  require(!a.empty() && a.size() == b.size(), "product_sum: {} and {} factors", a.size(), b.size());
  if constexpr (requires { ops.product_sum(a, b); }) {
    return ops.product_sum(a, b);
  } else {
    typename Ops::Value sum = ops.multiply(a[0], b[0]);
    for (std::size_t i = 1; i < a.size(); ++i) sum = ops.add(sum, ops.multiply(a[i], b[i]));
    return sum;
  }
}

namespace circuit_detail {

template <class Ops>
class SeriesOverOps {
 public:
  using Value = typename Ops::Value;

  SeriesOverOps(Ops& ops, Value t, bool chebyshev, std::size_t baby)
      : ops_(ops), chebyshev_(chebyshev), baby_(baby), powers_(baby + 1) {
    powers_[1] = std::move(t);
  }

  Value evaluate(const std::vector<double>& c) {
    if (c.size() <= baby_) return combine(c);
    std::size_t n = baby_;  // the largest baby * 2^k below the degree
    while (2 * n < c.size()) n *= 2;
    // p = q T_n + r. Chebyshev: T_(n+k) = 2 T_n T_k - T_(n-k), so q_0 = c_n, q_k = 2 c_(n+k) and
    // r_i = c_i - c_(2n-i); power basis: q_k = c_(n+k), r_i = c_i.
    std::vector<double> q(c.size() - n), r(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n));
    for (std::size_t k = 0; k < q.size(); ++k) q[k] = chebyshev_ && k > 0 ? 2 * c[n + k] : c[n + k];
    if (chebyshev_) {
      for (std::size_t k = 1; k < q.size(); ++k) r[n - k] -= c[n + k];
    }
    Value high = ops_.multiply(evaluate(q), giant(n));
    if (std::all_of(r.begin(), r.end(), [](double v) { return v == 0; })) return high;
    return ops_.add(high, evaluate(r));
  }

 private:
  // T_j (or x^j) for j <= baby.
  const Value& power(std::size_t j) {
    if (!powers_[j]) {
      const std::size_t i = j / 2;
      if (j % 2 == 0) {
        powers_[j] = chebyshev_ ? ops_.sub(ops_.multiply(ops_.add(power(i), power(i)), power(i)), 1.0)
                                : ops_.multiply(power(i), power(i));
      } else {  // T_(2i+1) = 2 T_i T_(i+1) - T_1; x^(2i+1) = x^i x^(i+1)
        powers_[j] = chebyshev_ ? ops_.sub(ops_.multiply(ops_.add(power(i), power(i)), power(i + 1)), power(1))
                                : ops_.multiply(power(i), power(i + 1));
      }
    }
    return *powers_[j];
  }

  // T_n for n = baby * 2^k: T_2n = 2 T_n^2 - 1 (x^2n = (x^n)^2).
  const Value& giant(std::size_t n) {
    if (n <= baby_) return power(n);
    auto it = giants_.find(n);
    if (it == giants_.end()) {
      const Value& half = giant(n / 2);
      Value g = chebyshev_ ? ops_.sub(ops_.multiply(ops_.add(half, half), half), 1.0) : ops_.multiply(half, half);
      it = giants_.emplace(n, std::move(g)).first;
    }
    return it->second;
  }

  // sum c_i T_i for i < baby: one constant product per nonzero term, c_0 added last.
  Value combine(const std::vector<double>& c) {
    std::optional<Value> sum;
    for (std::size_t i = 1; i < c.size(); ++i) {
      if (c[i] == 0) continue;
      Value term = ops_.multiply(power(i), c[i]);
      sum = sum ? ops_.add(*sum, term) : std::move(term);
    }
    if (!sum) sum = ops_.multiply(power(1), 0.0);  // a constant polynomial still needs a ciphertext
    return c.empty() || c[0] == 0 ? std::move(*sum) : ops_.add(*sum, c[0]);
  }

  Ops& ops_;
  bool chebyshev_;
  std::size_t baby_;
  std::vector<std::optional<Value>> powers_;
  std::map<std::size_t, Value> giants_;
};

}  // namespace circuit_detail

// p(x) on any ops object: Paterson-Stockmeyer, zero coefficients skipped (see the file comment).
template <class Ops>
typename Ops::Value evaluate(Ops& ops, const typename Ops::Value& x, const circuits::Polynomial& p) {
  require(!p.coefficients.empty(), "polynomial: no coefficients");
  const bool chebyshev = p.basis == circuits::PolynomialBasis::chebyshev;
  typename Ops::Value t = duplicate(x);
  if (p.maps_interval()) {  // t = (2x - lower - upper) / (upper - lower)
    require(p.upper > p.lower, "polynomial: the interval [{}, {}] is empty", p.lower, p.upper);
    t = ops.add(ops.multiply(x, 2 / (p.upper - p.lower)), -(p.lower + p.upper) / (p.upper - p.lower));
  }
  // Babies up to about sqrt(degree + 1), a power of two: giants then cover the rest by doubling.
  const std::size_t terms = p.coefficients.size();
  std::size_t baby = 2;
  while (baby * baby < terms) baby *= 2;
  circuit_detail::SeriesOverOps<Ops> series(ops, std::move(t), chebyshev, baby);
  return series.evaluate(p.coefficients);
}

// A matrix made ready for products: its baby-step giant-step plan and each turned diagonal diag'_(g,b) as a
// graph::PlainVector, made once. Products of several ciphertexts by one matrix (a layer applied to each ciphertext
// of rows) then share the plaintexts: a program stores, encodes and holds each once (the executor keys its
// plaintexts by their storage), where multiply(ops, x, matrix) makes new ones at each call. A value: copies share.
struct BsgsProduct {
  circuits::BsgsPlan plan;                                                  // the babies and giants
  std::map<std::pair<std::int64_t, std::int64_t>, PlainVector> diagonals;  // (giant, baby) -> diag'
};

namespace circuit_detail {

// A plan's diagonals, diag'_(g,b) = make(g, b) for each of its (giant, baby) pairs.
template <class Make>
BsgsProduct prepared(circuits::BsgsPlan plan, Make&& make) {
  BsgsProduct product{.plan = std::move(plan), .diagonals = {}};
  for (const auto& [g, babies] : product.plan.giants) {
    for (const std::int64_t b : babies) product.diagonals.emplace(std::pair{g, b}, make(g, b));
  }
  return product;
}

}  // namespace circuit_detail

// A circuits::DiagonalMatrix made ready: its diagonals stored (a compressed diagonal stays its period).
inline BsgsProduct prepare_product(const circuits::DiagonalMatrix& matrix, const circuits::BsgsOptions& options = {}) {
  return circuit_detail::prepared(circuits::plan_bsgs(matrix, options), [&](std::int64_t g, std::int64_t b) {
    return PlainVector(circuits::bsgs_diagonal(matrix, g, b));
  });
}

// A matrix given by its diagonals' offsets and a function that makes one diagonal (slots values) on demand: the
// product holds the matrix, not its diagonals, which are made when they are encoded (a layer's weights stay
// compact; graph::PlainVector's generated form). A source may also say period(): its diagonals are then that many
// values, repeating over the slots, and stay compressed until encoded.
template <class M>
concept DiagonalSource = requires(const M& m, std::int64_t offset) {
  { m.slots() } -> std::convertible_to<std::size_t>;
  { m.offsets() } -> std::convertible_to<std::vector<std::int64_t>>;
  { m.diagonal(offset) } -> std::convertible_to<std::vector<circuits::Complex>>;
};

// A DiagonalSource made ready: its diagonals generated when they are encoded.
template <DiagonalSource M>
BsgsProduct prepare_product(std::shared_ptr<const M> matrix, const circuits::BsgsOptions& options = {}) {
  require(matrix != nullptr, "matrix product: no matrix");
  const std::vector<std::int64_t> offsets = matrix->offsets();
  const std::size_t slots = matrix->slots();
  // A source with period() makes diagonals of that many values repeating over the slots (compressed).
  std::size_t period = slots;
  if constexpr (requires { { matrix->period() } -> std::convertible_to<std::size_t>; }) period = matrix->period();
  require(period >= 1 && slots % period == 0, "matrix product: a period of {} does not divide {} slots", period,
          slots);
  return circuit_detail::prepared(circuits::plan_bsgs(offsets, slots, options), [&](std::int64_t g, std::int64_t b) {
    return PlainVector(period, [matrix, g, b, slots, period] {
      auto diagonal = matrix->diagonal(circuits::wrap_offset(g + b, slots));
      require(diagonal.size() == period, "matrix product: a diagonal of {} values for a period of {}",
              diagonal.size(), period);
      return circuits::rotate_values(diagonal, -g);  // R^-g of a periodic vector: its period turned
    });
  });
}

// sum_f M_f x_f for prepared matrices by baby-step giant-step, y = sum_g R^g (sum_f sum_b diag'_(f,g,b) R^b x_f):
// every input's babies, then per giant the inner sums of all inputs added and turned once (a down projection
// split over FFN blocks pays its giant steps once, not once a block). One level. InvalidArgument for no inputs or
// a count of matrices that differs.
template <class Ops>
typename Ops::Value multiply_sum(Ops& ops, std::span<const typename Ops::Value> xs,
                                 std::span<const BsgsProduct* const> products) {
  using Value = typename Ops::Value;
  require(!xs.empty() && xs.size() == products.size(), "matrix product sum: {} inputs for {} matrices", xs.size(),
          products.size());
  std::vector<std::map<std::int64_t, Value>> rotated(xs.size());  // R^b x_f, one per baby (the planner hoists them)
  std::set<std::int64_t> giants;
  for (std::size_t f = 0; f < xs.size(); ++f) {
    for (const std::int64_t b : products[f]->plan.babies) {
      rotated[f].emplace(b, b == 0 ? duplicate(xs[f]) : ops.rotate(xs[f], b));
    }
    for (const auto& giant : products[f]->plan.giants) giants.insert(giant.first);
  }
  std::optional<Value> total;
  for (const std::int64_t giant : giants) {
    std::optional<Value> inner;
    for (std::size_t f = 0; f < xs.size(); ++f) {
      const auto found = products[f]->plan.giants.find(giant);
      if (found == products[f]->plan.giants.end()) continue;
      for (const std::int64_t b : found->second) {
        Value term = ops.multiply(rotated[f].at(b), products[f]->diagonals.at({giant, b}));
        inner = inner ? ops.add(*inner, term) : std::move(term);
      }
    }
    if (!inner) continue;
    Value turned = giant == 0 ? std::move(*inner) : ops.rotate(*inner, giant);
    total = total ? ops.add(*total, turned) : std::move(turned);
  }
  require(total.has_value(), "matrix product: the matrix has no diagonal");
  return std::move(*total);
}

// M x for a prepared matrix, by baby-step giant-step: one level (see the file comment).
template <class Ops>
typename Ops::Value multiply(Ops& ops, const typename Ops::Value& x, const BsgsProduct& product) {
  const BsgsProduct* products[] = {&product};
  return multiply_sum(ops, std::span<const typename Ops::Value>(&x, 1), std::span<const BsgsProduct* const>(products));
}

// M x for a circuits::DiagonalMatrix (its plaintexts made for this product; prepare_product shares them).
template <class Ops>
typename Ops::Value multiply(Ops& ops, const typename Ops::Value& x, const circuits::DiagonalMatrix& matrix,
                             const circuits::BsgsOptions& options = {}) {
  return multiply(ops, x, prepare_product(matrix, options));
}

// M x for a DiagonalSource, whose diagonals are made when the product's plaintexts are encoded.
template <class Ops, DiagonalSource M>
typename Ops::Value multiply(Ops& ops, const typename Ops::Value& x, std::shared_ptr<const M> matrix,
                             const circuits::BsgsOptions& options = {}) {
  return multiply(ops, x, prepare_product(std::move(matrix), options));
}

}  // namespace cerium::graph
