#include "cerium/graph/passes/hoisting.hpp"

#include <map>

namespace cerium::graph {

Hoisting hoist_rotations(const Program& program) {
  std::map<NodeId, std::vector<NodeId>> by_source;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    if (node.op == Op::rotate) by_source[node.inputs[0]].push_back(id);
  }
  Hoisting out;
  out.group_of.assign(program.size(), -1);
  for (const auto& [source, rotations] : by_source) {
    if (rotations.size() < 2) continue;
    HoistGroup group{.source = source, .rotations = rotations, .steps = {}};
    for (const NodeId id : rotations) {
      group.steps.push_back(program.node(id).steps);
      out.group_of[id] = static_cast<int>(out.groups.size());
    }
    out.groups.push_back(std::move(group));
  }
  return out;
}

}  // namespace cerium::graph
