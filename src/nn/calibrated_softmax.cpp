#include "cerium/nn/calibrated_softmax.hpp"

#include <algorithm>
#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::nn {

AttentionSoftmax<Exp, Reciprocal> calibrated_softmax(const ScoreRange& r, std::size_t keys,
                                                     const SoftmaxTolerances& tolerances) {
  require(keys >= 1 && r.lower <= r.lowest_row_max && r.lowest_row_max <= r.upper && tolerances.spread > 0,
          "softmax: scores in [{}, {}] with a lowest row maximum of {} over {} keys (spread {})", r.lower, r.upper,
          r.lowest_row_max, keys, tolerances.spread);
  // softmax of score / 2^k, squared back k times: k makes the spread between the bound and the lowest row
  // maximum at most `spread`, so the first denominators, in [a, 1], stay well conditioned.
  int k = 0;
  while ((r.upper - r.lowest_row_max) / std::exp2(k) > tolerances.spread) ++k;
  const double unit = std::exp2(-k), n = static_cast<double>(keys);
  // exp(score - upper) unscaled (at most 1): a bootstrap's error is absolute below |x| = 1, so a value kept
  // small pays it as a relative error. A row's total holds its largest term: in [lo, n].
  const double lo = std::exp((r.lowest_row_max - r.upper) * unit);
  const double least_square_sum = std::min(1 / n, 0.5);  // 1 / n, or a range for one key
  // Each reciprocal c / x with c the power of two that keeps its outputs at most 4 (its largest, c / least total,
  // stays bootstrappable at the planner's magnitude limits); the weights are then c times the true ones until
  // softmax multiplies them back.
  const auto at_most_four = [](double least) { return std::exp2(std::floor(std::log2(std::min(4 * least, 1.0)))); };
  const double first = at_most_four(lo), square = at_most_four(least_square_sum);
  return {.upper = r.upper * unit,
          .exp = Exp({.lower = (r.lower - r.upper) * unit, .upper = 0, .tolerance = tolerances.exp, .scale = 1}),
          .reciprocal = Reciprocal({.lower = lo, .upper = n, .tolerance = tolerances.reciprocal, .scale = first}),
          .first_scale = 1 / first,
          .score_scale = unit,
          .squarings = k,
          .renormalize = Reciprocal({.lower = least_square_sum, .upper = 1, .tolerance = tolerances.reciprocal,
                                     .scale = square}),
          .square_scale = 1 / square,
          .precise_bootstraps = tolerances.precise_bootstraps};
}

int activation_degree(int requested, double bound) {
  if (requested > 0) return requested;
  for (const int degree : {16, 32, 64, 96, 128}) {
    if (degree >= 4 * bound) return degree;
  }
  return 192;
}

}  // namespace cerium::nn
