#pragma once
// The program the graph benchmarks time, written once for graph::Tracer and graph::Eager: `rounds` rounds of
// y <- y^2 + rotate(y, 2^r) (a product, a rotation and a sum each), then a product by a periodic plaintext.
// It spends rounds + 1 levels and rounds rotation keys.

#include <cstdint>
#include <vector>

#include "cerium/graph/node.hpp"

namespace cerium_bench {

template <class Ops>
typename Ops::Value graph_block(Ops& ops, const typename Ops::Value& x, int rounds,
                                const cerium::graph::PlainVector& weights) {
  typename Ops::Value y = ops.multiply(x, 0.5);
  for (int r = 0; r < rounds; ++r) {
    y = ops.add(ops.multiply(y, y), ops.rotate(y, std::int64_t{1} << r));
  }
  return ops.multiply(y, weights);
}

inline std::vector<std::int64_t> graph_block_steps(int rounds) {
  std::vector<std::int64_t> steps;
  for (int r = 0; r < rounds; ++r) steps.push_back(std::int64_t{1} << r);
  return steps;
}

}  // namespace cerium_bench
