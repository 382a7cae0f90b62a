#pragma once
// Minimax (best uniform) odd polynomial approximations of sign(x), and composite sign approximations built from
// them stage by stage (Lee, Lee, Kim and No, "Minimax approximation of sign function by composite polynomial for
// homomorphic comparison", 2021): p_k(... p_1(x)) within `error` of sign(x) for eps <= |x| <= 1, at a depth of about
// sum ceil(log2(d_i + 1)) instead of the single polynomial's much higher degree.
//
// The Remez exchange algorithm finds each p: for an odd p = sum c_j T_(2j+1)(x) (Chebyshev basis: well
// conditioned on [-1, 1]) approximating 1 on [lower, upper] (0 < lower), the n = (d + 1) / 2 coefficients are the
// best approximation exactly when the error p - 1 equioscillates on n + 1 points (the alternation theorem: odd
// Chebyshev polynomials form a Haar system on an interval of positive numbers); by oddness p then approximates
// sign on [-upper, -lower] too. The design runs in u = x / upper on [lower / upper, 1], where the basis is bounded.
//  1. Start from n + 1 points evenly spaced in acos(u) from lower / upper to 1 (where a Chebyshev-like
//     polynomial's extrema lie): the reference.
//  2. Solve the linear system p(x_i) - 1 = -(-1)^i E for the coefficients and the levelled error E (long double,
//     partial pivoting).
//  3. Find every local extremum of p - 1 on [lower, upper] (sign changes of p' on a fine grid in acos(x), then
//     bisection) and the two ends; merge neighbours of the same sign keeping the larger |p - 1|, and drop the
//     smaller end while more than n + 1 remain: the new reference alternates and keeps the largest error
//     (multiple exchange).
//  4. Stop when max |p - 1| - |E| <= tolerance max |p - 1| (de la Vallee Poussin: the optimum lies between
//     them) or below what long double resolves near 1 (64 ulps), or when max |p - 1| is below 1e-14 (rounding:
//     the coefficients are stored as doubles); NumericalError after max_iterations.

#include <vector>

#include "cerium/circuits/polynomial.hpp"

namespace cerium::circuits {

// When minimax_sign's exchange stops.
struct RemezOptions {
  int max_iterations = 100;  // exchanges before NumericalError
  double tolerance = 1e-10;  // relative gap between the largest error and the levelled error
};

// The best odd approximation of sign on [lower, upper].
struct MinimaxSign {
  Polynomial polynomial;  // odd, Chebyshev basis: coefficients of T_1, T_3, .., T_degree (the even ones 0)
  double error = 0;       // max |p(x) - 1| over [lower, upper], measured with the stored (double) coefficients
  // The (degree + 3) / 2 points where p - 1 = -+error in alternating signs (fewer when error is below 1e-14).
  std::vector<double> alternation;
  int iterations = 0;  // exchanges it took
};

// The polynomial is on [-1, 1] when upper = 1, else on [-upper, upper] (the design runs in x / upper, where the
// basis is well conditioned; evaluating it then maps the interval, a level). Where the interval is so easy that the
// optimum of this degree lies below double rounding, a lower degree that reaches it is returned (its degree() says).
// InvalidArgument unless degree is odd and at least 3 and 0 < lower < upper <= 1; NumericalError when the exchange
// does not converge within options.max_iterations.
MinimaxSign minimax_sign(int degree, double lower, double upper = 1, const RemezOptions& options = {});

// One stage of a composite sign: the polynomial as evaluated, and the interval [lower, 1] that the stages before it
// leave of [eps, 1] (its image of [-1, -lower] follows by oddness).
struct SignStage {
  Polynomial polynomial;  // odd, Chebyshev basis on [-1, 1]; maps [-1, 1] into [-1, 1] except the last stage
  double lower = 0;       // its positive inputs lie in [lower, 1]
  double error = 0;       // its error as a sign approximation on [lower, 1], before the division by its maximum
};

// A composite sign approximation p_k(... p_1(x)) (see the file comment), from composite_sign.
struct CompositeSign {
  std::vector<SignStage> stages;  // p_1 .. p_k, in evaluation order
  double eps = 0;                 // the design's smallest |x|: [eps, 1] maps within error of 1
  // max |p_k(... p_1(x)) - sign(x)| for eps <= |x| <= 1: the last stage's error on the image it receives.
  double error = 0;
  // max |p_k(... p_1(x))| for |x| <= 1; for |x| < eps the output has the sign of x (and is at most peak, below 2).
  double peak = 0;

  // Evaluates the stages in order on doubles (the plaintext reference).
  double evaluate(double x) const;
};

// Designs the stages in order: stage i is the minimax odd approximation of degree degrees[i] to sign on the image
// [lo, 1] that the stages before it leave of [eps, 1] (stage 1: [eps, 1]); every stage but the last is then
// divided by its maximum on [0, 1], so that the next stage's inputs stay in [-1, 1] (sign does not see the scale).
// A stage whose optimum would leave [0, 1] for inputs below lo (after a stage that is already accurate, the image
// is so narrow that the optimum ignores the rest) is designed on a wider interval instead. InvalidArgument naming
// the value unless eps is in (0, 1) and every degree is odd and at least 3; NumericalError when a stage cannot be
// designed.
CompositeSign composite_sign(const std::vector<int>& degrees, double eps, const RemezOptions& options = {});

}  // namespace cerium::circuits
