#pragma once
// A real polynomial to evaluate on ciphertexts, in the Chebyshev basis (well conditioned on an interval: the
// choice for approximations of functions) or the power basis, with its plaintext reference.

#include <cstddef>
#include <functional>
#include <vector>

namespace cerium::circuits {

// How a Polynomial's coefficients are read: as Chebyshev T_k(t) or powers x^k.
enum class PolynomialBasis { chebyshev, power };
// A polynomial's symmetry: none, even (even powers only) or odd (odd powers only).
enum class Parity { none, even, odd };

// A real polynomial in the Chebyshev or power basis (see the file comment).
struct Polynomial {
  // How the coefficients are read.
  PolynomialBasis basis = PolynomialBasis::chebyshev;
  std::vector<double> coefficients;  // c_0 .. c_degree: p = sum c_k T_k(t) (Chebyshev) or sum c_k x^k (power)
  // Chebyshev: the interval [lower, upper] the inputs lie in; t = (2 x - lower - upper) / (upper - lower) maps it
  // onto [-1, 1] (one level, unless it is [-1, 1] already). Ignored by the power basis.
  double lower = -1, upper = 1;  // lower < upper, both finite

  // The interpolant of f at the degree + 1 Chebyshev nodes of [lower, upper] (long double sums).
  static Polynomial chebyshev_interpolant(const std::function<long double(long double)>& f, int degree,
                                          double lower = -1, double upper = 1);
  // The power-basis polynomial sum c_k x^k of these coefficients.
  static Polynomial power(std::vector<double> coefficients);

  // The index of the last coefficient (zero ones included); 0 for no coefficients.
  std::size_t degree() const { return coefficients.empty() ? 0 : coefficients.size() - 1; }
  // Even or odd when every other coefficient is exactly zero: the evaluation then skips the powers of the other
  // parity.
  Parity parity() const;
  // Whether the Chebyshev interval needs the affine map (a level).
  bool maps_interval() const { return basis == PolynomialBasis::chebyshev && (lower != -1 || upper != 1); }
  // p(x) in doubles (Clenshaw or Horner): the plaintext reference.
  double evaluate(double x) const;
};

// c_0 .. c_degree with f(x) ~ sum c_i T_i(x) on [-1, 1]: interpolation at the degree + 1 Chebyshev nodes.
std::vector<double> chebyshev_coefficients(const std::function<long double(long double)>& f, int degree);
// sum c_i T_i(x) by Clenshaw's recurrence.
double chebyshev_evaluate(const std::vector<double>& coefficients, double x);

}  // namespace cerium::circuits
