#include "cerium/graph/program.hpp"

#include <algorithm>

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
    // The message built only on failure: describe() formats a string, and every traced node comes here.
    if (nodes_[input].op == Op::output) require(false, "node {} reads {}, an output", id, describe(input));
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

void Program::keep_exact(NodeId id, std::span<const NodeId> from) { mark_path(id, from, &Node::keep_exact); }

void Program::bootstrap_precisely(NodeId id, std::span<const NodeId> from) {
  mark_path(id, from, &Node::precise_bootstrap);
}

void Program::mark_path(NodeId id, std::span<const NodeId> from, bool Node::*flag) {
  require(id < nodes_.size(), "node {} does not exist: the program has {} nodes", id, nodes_.size());
  // The nodes reached from `from` (nodes come after their operands, so one pass in order), then those of them
  // that `id` reads, walking back.
  NodeId earliest = id;
  for (const NodeId f : from) earliest = std::min(earliest, f);
  std::vector<bool> reached(id + 1 - earliest);
  for (const NodeId f : from) {
    if (f <= id) reached[f - earliest] = true;
  }
  for (NodeId n = earliest; n <= id; ++n) {
    for (const NodeId input : nodes_[n].inputs) {
      if (input >= earliest && reached[input - earliest]) reached[n - earliest] = true;
    }
  }
  const auto is_source = [&](NodeId n) { return std::find(from.begin(), from.end(), n) != from.end(); };
  if (is_source(id)) return;
  nodes_[id].*flag = true;
  std::vector<NodeId> pending(nodes_[id].inputs.begin(), nodes_[id].inputs.end());
  while (!pending.empty()) {
    const NodeId n = pending.back();
    pending.pop_back();
    if (n < earliest || !reached[n - earliest] || is_source(n)) continue;
    reached[n - earliest] = false;  // visited once; a node marked by an earlier call is walked past all the same
    nodes_[n].*flag = true;
    for (const NodeId input : nodes_[n].inputs) pending.push_back(input);
  }
}

}  // namespace cerium::graph
