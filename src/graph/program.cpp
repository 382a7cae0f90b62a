#include "cerium/graph/program.hpp"

#include <fmt/format.h>

#include "cerium/core/check.hpp"

namespace cerium::graph {

const Node& Program::node(NodeId id) const {
  require(id < nodes_.size(), "node {} does not exist: the program has {} nodes", id, nodes_.size());
  return nodes_[id];
}

std::vector<std::vector<NodeId>> Program::consumers() const {
  std::vector<std::vector<NodeId>> out(nodes_.size());
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    for (const NodeId input : nodes_[id].inputs) {
      if (out[input].empty() || out[input].back() != id) out[input].push_back(id);
    }
  }
  return out;
}

std::string Program::describe(NodeId id) const {
  const Node& n = node(id);
  if (n.name.empty()) return fmt::format("node {} ({})", id, to_string(n.op));
  return fmt::format("node {} ({} '{}')", id, to_string(n.op), n.name);
}

NodeId Program::append(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  for (const NodeId input : node.inputs) {
    require(input < id, "node {} reads node {}, which comes after it", id, input);
    require(nodes_[input].op != Op::output, "node {} reads {}, an output", id, describe(input));
  }
  if (node.op == Op::input) inputs_.push_back(id);
  if (node.op == Op::output) outputs_.push_back(id);
  nodes_.push_back(std::move(node));
  return id;
}

void Program::rename(NodeId id, std::string name) {
  require(id < nodes_.size(), "node {} does not exist: the program has {} nodes", id, nodes_.size());
  nodes_[id].name = std::move(name);
}

}  // namespace cerium::graph
