#pragma once
// Shared by the encrypted transformer tests: random token rows, matrix differences, and seeded weights given a
// trained model's spread.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <initializer_list>
#include <random>

#include "cerium/nn/bert.hpp"
#include "support/catch.hpp"

namespace transformer_test {

namespace nn = cerium::nn;

inline nn::Matrix random_rows(std::size_t rows, std::size_t cols, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0, 1);
  nn::Matrix m = nn::Matrix::zeros(rows, cols);
  for (double& v : m.values) v = d(rng);
  return m;
}

inline double max_difference(const nn::Matrix& a, const nn::Matrix& b) {
  REQUIRE(a.values.size() == b.values.size());
  double e = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i) e = std::max(e, std::abs(a.values[i] - b.values[i]));
  return e;
}

// Seeded N(0, 0.02) weights rescaled to N(0, 1 / fan-in), a trained model's spread: scores of order 1, so that
// attention and the activations are exercised over their ranges.
inline void spread_like_trained(std::initializer_list<nn::LinearWeights*> layers) {
  for (nn::LinearWeights* lin : layers) {
    const double factor = 1 / (0.02 * std::sqrt(static_cast<double>(lin->weight.cols)));
    for (double& v : lin->weight.values) v *= factor;
  }
}

}  // namespace transformer_test
