#include "cerium/graph/passes/bootstrap_pairs.hpp"

#include <algorithm>
#include <map>

#include "cerium/core/check.hpp"

namespace cerium::graph {

std::vector<NodeId> bootstrap_epoch_order(const Program& program, const std::vector<bool>& bootstrapped) {
  require(bootstrapped.size() == program.size(), "bootstrap_epoch_order: {} flags for a program of {} nodes",
          bootstrapped.size(), program.size());
  // A node's epoch: the most refreshes on a path from an input to it (its operands' epochs, one more past a
  // bootstrapped operand). Outputs go after everything, at one epoch past the last.
  std::vector<int> epoch(program.size(), 0);
  int last = 0;
  for (NodeId id = 0; id < program.size(); ++id) {
    for (const NodeId input : program.node(id).inputs) {
      epoch[id] = std::max(epoch[id], epoch[input] + (bootstrapped[input] ? 1 : 0));
    }
    last = std::max(last, epoch[id] + (bootstrapped[id] ? 1 : 0));
  }
  for (const NodeId id : program.outputs()) epoch[id] = last + 1;
  std::vector<NodeId> order(program.size());
  for (NodeId id = 0; id < program.size(); ++id) order[id] = id;
  // Stable: trace order within an epoch; inputs (epoch 0, no operands) keep theirs, as do outputs.
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) { return epoch[a] < epoch[b]; });
  return order;
}

Program reordered(const Program& program, std::span<const NodeId> order) {
  require(order.size() == program.size(), "reordered: an order of {} nodes for a program of {}", order.size(),
          program.size());
  constexpr NodeId unplaced = ~NodeId{0};
  std::vector<NodeId> position(program.size(), unplaced);
  Program out(program.context());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const NodeId id = order[i];
    require(id < program.size() && position[id] == unplaced, "reordered: node {} is {} in the order", id,
            id < program.size() ? "twice" : "not a node");
    Node node = program.node(id);
    for (NodeId& input : node.inputs) {
      if (position[input] == unplaced) {  // (describe() formats strings: only on failure)
        require(false, "reordered: {} comes before its operand {}", program.describe(id), program.describe(input));
      }
      input = position[input];
    }
    position[id] = out.append(std::move(node));
  }
  // The executor takes inputs and gives outputs in their order: it must not change.
  const auto kept = [&](std::span<const NodeId> before, std::span<const NodeId> after) {
    return std::equal(before.begin(), before.end(), after.begin(), after.end(),
                      [&](NodeId a, NodeId b) { return position[a] == b; });
  };
  require(kept(program.inputs(), out.inputs()) && kept(program.outputs(), out.outputs()),
          "reordered: the order moves inputs or outputs past one another");
  return out;
}

std::vector<NodeId> pair_bootstraps(const Program& program,
                                    const std::vector<std::optional<PairableBootstrap>>& bootstraps) {
  require(bootstraps.size() == program.size(), "pair_bootstraps: {} entries for a program of {} nodes",
          bootstraps.size(), program.size());
  std::vector<NodeId> first_reader(program.size(), ~NodeId{0});
  for (NodeId id = 0; id < program.size(); ++id) {
    for (const NodeId input : program.node(id).inputs) first_reader[input] = std::min(first_reader[input], id);
  }
  std::vector<NodeId> partner(program.size());
  for (NodeId id = 0; id < program.size(); ++id) partner[id] = id;
  std::map<PairableBootstrap, NodeId> waiting;  // per kind: a bootstrap without a partner yet
  for (NodeId id = 0; id < program.size(); ++id) {
    if (!bootstraps[id]) continue;
    const auto [it, fresh] = waiting.try_emplace(*bootstraps[id], id);
    if (fresh) continue;
    const NodeId x = it->second;
    if (first_reader[x] > id) {  // x's value can wait for this one's: one refresh for both
      partner[x] = id;
      partner[id] = x;
      waiting.erase(it);
    } else {
      it->second = id;  // x is read before this one exists: it runs alone
    }
  }
  return partner;
}

}  // namespace cerium::graph
