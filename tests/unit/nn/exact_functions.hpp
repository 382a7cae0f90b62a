#pragma once
// The non-linear pieces of a transformer computed exactly on slot vectors (graph::PlainOps only): with them, a
// layer's data movement (packing, masks, rotations) is checked against direct matrix arithmetic to rounding.

#include <cmath>
#include <complex>
#include <cstddef>
#include <vector>

#include "cerium/graph/plain_ops.hpp"
#include "cerium/nn/row_layout.hpp"

namespace exact_functions {

using Value = cerium::graph::PlainOps::Value;
using Complex = std::complex<double>;

struct Exp {
  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    return cerium::graph::PlainOps::map(x, [](std::size_t, Complex v) { return std::exp(v); });
  }
};

struct Reciprocal {
  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    return cerium::graph::PlainOps::map(x, [](std::size_t, Complex v) { return 1.0 / v; });
  }
};

struct Gelu {
  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    return cerium::graph::PlainOps::map(
        x, [](std::size_t, Complex v) { return Complex(0.5 * v.real() * (1 + std::erf(v.real() / std::sqrt(2.0)))); });
  }
};

// LayerNorm over each row's valid features; the padding stays 0.
struct LayerNorm {
  cerium::nn::RowLayout layout;
  std::vector<double> gamma, beta;
  double eps = 1e-12;

  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    Value y(x.size(), 0.0);
    const double n = static_cast<double>(layout.features);
    for (std::size_t r = 0; r < layout.rows; ++r) {
      double mean = 0, var = 0;
      for (std::size_t f = 0; f < layout.features; ++f) mean += x[layout.slot(r, f)].real() / n;
      for (std::size_t f = 0; f < layout.features; ++f) var += std::pow(x[layout.slot(r, f)].real() - mean, 2) / n;
      for (std::size_t f = 0; f < layout.features; ++f) {
        y[layout.slot(r, f)] = gamma[f] * (x[layout.slot(r, f)].real() - mean) / std::sqrt(var + eps) + beta[f];
      }
    }
    return y;
  }
};

struct Silu {
  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    return cerium::graph::PlainOps::map(x, [](std::size_t, Complex v) { return Complex(v.real() / (1 + std::exp(-v.real()))); });
  }
};

// RMSNorm over each row's valid features; the padding stays 0.
struct RmsNorm {
  cerium::nn::RowLayout layout;
  std::vector<double> gamma;
  double eps = 1e-5;

  Value forward(cerium::graph::PlainOps&, const Value& x) const {
    Value y(x.size(), 0.0);
    for (std::size_t r = 0; r < layout.rows; ++r) {
      double mean_square = 0;
      for (std::size_t f = 0; f < layout.features; ++f) {
        mean_square += std::norm(x[layout.slot(r, f)].real()) / static_cast<double>(layout.features);
      }
      for (std::size_t f = 0; f < layout.features; ++f) {
        y[layout.slot(r, f)] = gamma[f] * x[layout.slot(r, f)].real() / std::sqrt(mean_square + eps);
      }
    }
    return y;
  }
};

}  // namespace exact_functions
