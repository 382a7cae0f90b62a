#pragma once
// Chebyshev interpolation on [-1, 1] and the scaled cosine that EvalMod approximates. Internal.

#include <functional>
#include <vector>

namespace cerium::ckks::bootstrap_detail {

// c_0 .. c_degree with f(x) ~ sum c_i T_i(x): interpolation at the degree + 1 Chebyshev nodes (long double sums).
std::vector<double> chebyshev_coefficients(const std::function<long double(long double)>& f, int degree);
// sum c_i T_i(x) by Clenshaw's recurrence.
double chebyshev_evaluate(const std::vector<double>& coefficients, double x);

// The function EvalMod interpolates: cos(2 pi (K x - 1/4) / 2^r). After r double-angle steps
// (c -> 2 c^2 - 1) it is sin(2 pi K x), and sin(2 pi K x) / (2 pi) = K x - round(K x) up to a cubic error.
std::function<long double(long double)> scaled_cosine(int k_range, int double_angle_steps);

}  // namespace cerium::ckks::bootstrap_detail
