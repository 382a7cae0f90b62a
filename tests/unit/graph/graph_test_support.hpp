#pragma once
// Random programs written once as a template over an "ops" object, run three ways: traced (graph::Tracer), eager
// on ciphertexts (graph::Eager), and on plaintext slot vectors in double precision (ReferenceOps, here).

#include <algorithm>
#include <complex>
#include <cstdint>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "cerium/graph/circuits.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/graph/plain_ops.hpp"

namespace graph_test {

using Complex = std::complex<double>;
using Slots = std::vector<Complex>;

// The plaintext twin (graph/plain_ops.hpp) under the tests' name.
using ReferenceOps = cerium::graph::PlainOps;

// What a random program needs from the test: the seed of its choices, its size, the depth it may use.
struct ProgramShape {
  std::uint64_t seed = 1;
  int operations = 12;
  int depth = 4;               // products along any path (the levels it spends)
  std::size_t slots = 8;
  bool pin_bootstrap = false;  // pin one bootstrap (needs a bootstrapper)
};

// A random program over `inputs`: the same choices for every ops object (the rng is seeded from shape.seed and
// draws do not depend on the values). Returns the rotation steps it uses (reduced to [0, slots)) and whether it
// conjugates, for checking key inference.
template <class Ops>
std::pair<std::set<std::int64_t>, bool> random_program(Ops& ops, std::vector<typename Ops::Value> values,
                                                       const ProgramShape& shape) {
  std::mt19937_64 rng(shape.seed);
  std::vector<int> depth(values.size(), 0);
  std::set<std::int64_t> steps;
  bool conjugates = false;
  const auto pick = [&] { return std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng); };
  std::uniform_real_distribution<double> unit(-1, 1);
  const auto plain = [&] {
    const std::size_t period = std::size_t{1} << std::uniform_int_distribution<int>(0, 3)(rng);
    std::vector<double> v(std::min(period, shape.slots));
    for (auto& x : v) x = unit(rng);
    return cerium::graph::PlainVector(v);
  };
  for (int k = 0; k < shape.operations; ++k) {
    const std::size_t a = pick(), b = pick();
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    typename Ops::Value out;
    int d = depth[a];
    switch (kind) {
      case 0:
        out = ops.add(values[a], values[b]);
        d = std::max(depth[a], depth[b]);
        break;
      case 1:
        out = ops.sub(values[a], values[b]);
        d = std::max(depth[a], depth[b]);
        break;
      case 2: out = ops.negate(values[a]); break;
      case 3: {
        // Every other product a product sum, a b + c a (one relinearization), where c's depth allows.
        const std::size_t c = pick();
        const bool sum = rng() % 2 == 0 && depth[c] < shape.depth;
        if (std::max(depth[a], depth[b]) >= shape.depth) {
          out = ops.add(values[a], values[b]);
          d = std::max(depth[a], depth[b]);
        } else if (sum) {
          std::vector<typename Ops::Value> left, right;
          left.push_back(cerium::graph::duplicate(values[a]));
          left.push_back(cerium::graph::duplicate(values[c]));
          right.push_back(cerium::graph::duplicate(values[b]));
          right.push_back(cerium::graph::duplicate(values[a]));
          out = cerium::graph::product_sum(ops, std::span<const typename Ops::Value>(left),
                                           std::span<const typename Ops::Value>(right));
          d = std::max({depth[a], depth[b], depth[c]}) + 1;
        } else {
          out = ops.multiply(values[a], values[b]);
          d = std::max(depth[a], depth[b]) + 1;
        }
        break;
      }
      case 4: {
        const auto p = plain();
        if (depth[a] >= shape.depth) {
          out = ops.add(values[a], p);
        } else {
          out = ops.multiply(values[a], p);
          d = depth[a] + 1;
        }
        break;
      }
      case 5: {
        const double c = unit(rng);
        if (depth[a] >= shape.depth) {
          out = ops.add(values[a], Complex(c, 0));
        } else {
          out = ops.multiply(values[a], c);
          d = depth[a] + 1;
        }
        break;
      }
      case 6: out = ops.add(values[a], plain()); break;
      case 7: out = ops.add(values[a], Complex(unit(rng), unit(rng))); break;
      case 8: {
        const std::int64_t s = std::vector<std::int64_t>{1, 2, 5, -3, 7}[std::uniform_int_distribution<int>(0, 4)(rng)];
        const auto n = static_cast<std::int64_t>(shape.slots);
        const std::int64_t reduced = ((s % n) + n) % n;
        out = ops.rotate(values[a], s);
        if (reduced != 0) steps.insert(reduced);
        break;
      }
      default:
        out = ops.conjugate(values[a]);
        conjugates = true;
        break;
    }
    // Keep magnitudes near 1 so that products stay within the scale's headroom.
    values.push_back(std::move(out));
    depth.push_back(d);
  }
  if (shape.pin_bootstrap) {
    values.push_back(ops.bootstrap(values.back()));
    depth.push_back(0);
  }
  ops.output(values.back(), "last");
  ops.output(values[values.size() / 2], "middle");
  return {steps, conjugates};
}

}  // namespace graph_test
