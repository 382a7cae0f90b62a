#pragma once
// The programs the graph benchmarks time, written once for graph::Tracer and graph::Eager:
//  - graph_block: `rounds` rounds of y <- y^2 + rotate(y, 2^r) (a product, a rotation and a sum each), then a
//    product by a periodic plaintext. It spends rounds + 1 levels and rounds rotation keys.
//  - block_diagonal: a slots x slots matrix of one block x block block repeated down its diagonal, as its 2 block - 1
//    nonzero diagonals, each periodic with period `block`: the weight of a layer applied to every token row, whose
//    plaintexts a program may keep compressed (their period) or fully encoded.

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
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

// Entries uniform in [-1, 1] / block (products stay near the inputs' size), from a seed.
inline cerium::circuits::DiagonalMatrix block_diagonal(std::size_t slots, std::size_t block, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> entry(-1.0 / static_cast<double>(block), 1.0 / static_cast<double>(block));
  std::vector<std::vector<double>> b(block, std::vector<double>(block));
  for (auto& row : b) {
    for (double& v : row) v = entry(rng);
  }
  cerium::circuits::DiagonalMatrix m{.slots = slots, .diagonals = {}};
  const auto side = static_cast<std::int64_t>(block);
  for (std::int64_t d = 1 - side; d < side; ++d) {
    // diag_d[i] = M[i][i + d]: row r = i mod block of the block, column r + d when inside it.
    std::vector<std::complex<double>> period(block);
    for (std::int64_t r = std::max<std::int64_t>(0, -d); r < std::min(side, side - d); ++r) {
      period[static_cast<std::size_t>(r)] = b[static_cast<std::size_t>(r)][static_cast<std::size_t>(r + d)];
    }
    m.add_diagonal(d, std::move(period));
  }
  return m;
}

}  // namespace cerium_bench
