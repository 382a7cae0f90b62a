#pragma once
// A transformer block for the sharded tests (in-process and MPI ranks): token-wise Q, K, V projections and
// two-head self-attention with a polynomial softmax on 8 rows of 16 features, its weights from one seed.
#include <random>
#include <vector>

#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/attention.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "cerium/nn/row_linear.hpp"

namespace sharded_test {

namespace nn = cerium::nn;
namespace graph = cerium::graph;

inline std::vector<double> normal(std::size_t n, std::mt19937_64& rng, double sd) {
  std::normal_distribution<double> d(0, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline graph::PlainOps::Value pack(const nn::RowLayout& l, const std::vector<double>& m) {
  graph::PlainOps::Value slots(l.slots(), 0.0);
  for (std::size_t r = 0; r < l.rows; ++r) {
    for (std::size_t f = 0; f < l.features; ++f) slots[l.slot(r, f)] = m[r * l.features + f];
  }
  return slots;
}

struct AttentionBlock {
  nn::AttentionShape shape{.layout = {.rows = 8, .features = 16, .stride = 32}, .heads = 2, .valid_rows = 7};
  nn::RowLinear q, k, v;
  nn::AttentionSoftmax<nn::Exp, nn::Reciprocal> softmax{
      .upper = 2, .exp = nn::Exp({.lower = -4, .upper = 0, .tolerance = 1e-4, .scale = 1.0 / 7}),
      .reciprocal = nn::Reciprocal({.lower = 0.002, .upper = 1, .tolerance = 1e-3, .scale = 0.002}),
      .first_scale = 500};

  explicit AttentionBlock(std::mt19937_64& rng)
      : q(shape.layout, shape.layout, normal(256, rng, 0.05), normal(16, rng, 0.1)),
        k(shape.layout, shape.layout, normal(256, rng, 0.05), {}),
        v(shape.layout, shape.layout, normal(256, rng, 0.3), normal(16, rng, 0.3)) {}

  template <class Ops, class Value>
  Value operator()(Ops& ops, const Value& x) const {
    return nn::self_attention(ops, q.forward(ops, x), k.forward(ops, x), v.forward(ops, x), shape, softmax);
  }
  // Traced and planned over the context.
  graph::Plan plan(const cerium::ckks::ContextPtr& context) const {
    graph::Tracer t(context);
    t.output((*this)(t, t.input("x", shape.layout.slots())), "y");
    return graph::plan(std::move(t).finish());
  }
};

}  // namespace sharded_test
