#include "cerium/graph/passes/plain_sums.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "cerium/core/check.hpp"
#include "cerium/graph/planner.hpp"

namespace cerium::graph {

PlainSums find_plain_sums(const Program& program, const std::vector<NodePlan>& nodes) {
  const std::size_t n = program.size();
  require(nodes.size() == n, "plain sums: {} node plans for {} nodes", nodes.size(), n);
  const std::vector<std::vector<NodeId>> readers = program.consumers();
  const auto single_reader = [&](NodeId v) { return readers[v].size() == 1 && !nodes[v].bootstrap; };
  // The level and slots a product reads its ciphertext at: one per sum, so the fused call sees one level.
  const auto product_key = [&](NodeId v) {
    const NodeId source = program.node(v).inputs[0];
    return std::pair{nodes[source].held_level, program.node(source).slots};
  };
  // pure[v]: v is a product, or an addition of two pure operands each read only by v; key: their products' key.
  std::vector<char> pure(n, 0);
  std::vector<std::pair<int, std::size_t>> key(n);
  for (NodeId v = 0; v < n; ++v) {
    const Node& node = program.node(v);
    if (node.op == Op::multiply_plain) {
      pure[v] = 1;
      key[v] = product_key(v);
    } else if (node.op == Op::add && node.inputs.size() == 2 && node.inputs[0] != node.inputs[1]) {
      const NodeId a = node.inputs[0], b = node.inputs[1];
      pure[v] = pure[a] && pure[b] && single_reader(a) && single_reader(b) && key[a] == key[b];
      key[v] = key[a];
    }
  }
  PlainSums result;
  result.sum_of.assign(n, -1);
  for (NodeId v = 0; v < n; ++v) {
    if (!pure[v] || program.node(v).op != Op::add) continue;
    // A root: not absorbed by a pure addition that reads it.
    const bool absorbed = single_reader(v) && program.node(readers[v][0]).op == Op::add && pure[readers[v][0]];
    if (absorbed) continue;
    PlainSum sum;
    sum.root = v;
    std::vector<NodeId> stack{v};  // explicit: a sum may chain thousands of additions
    while (!stack.empty()) {
      const NodeId u = stack.back();
      stack.pop_back();
      sum.members.push_back(u);
      if (program.node(u).op == Op::multiply_plain) {
        sum.products.push_back(u);
      } else {
        for (const NodeId w : program.node(u).inputs) stack.push_back(w);
      }
    }
    std::sort(sum.products.begin(), sum.products.end());
    std::sort(sum.members.begin(), sum.members.end());
    const int index = static_cast<int>(result.sums.size());
    for (const NodeId u : sum.members) result.sum_of[u] = index;
    result.sums.push_back(std::move(sum));
  }
  return result;
}

}  // namespace cerium::graph
