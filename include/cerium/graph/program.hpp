#pragma once
// A traced encrypted program: its nodes in the order they were traced (every operand before its user), its
// inputs and its outputs, over one CKKS context. Made by graph::Tracer; planned by graph::plan.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/node.hpp"

namespace cerium::graph {

// A traced program (see the file comment); Tracer builds it through append().
class Program {
 public:
  Program() = default;
  // An empty program over context.
  explicit Program(ckks::ContextPtr context) : context_(std::move(context)) {}

  const ckks::ContextPtr& context() const { return context_; }  // the CKKS context it is over
  std::size_t size() const { return nodes_.size(); }            // the number of nodes
  const std::vector<Node>& nodes() const { return nodes_; }     // in trace order; index: NodeId
  // InvalidArgument for an id that is not a node of this program.
  const Node& node(NodeId id) const;
  std::span<const NodeId> inputs() const { return inputs_; }    // the input nodes, in trace order
  std::span<const NodeId> outputs() const { return outputs_; }  // the output nodes, in trace order
  // For each node, the nodes that read it, in increasing order.
  std::vector<std::vector<NodeId>> consumers() const;

  // "node 12 (multiply 'attention')": how errors and explain() name a node.
  std::string describe(NodeId id) const;

  // Appends a node whose operands are already in the program (Tracer's job); returns its id.
  NodeId append(Node node);
  // A label for a node (explain() and errors show it).
  void rename(NodeId id, std::string name);
  // Marks `id` and every node on a path from one of `from` to it (`from` excluded) as never bootstrapped
  // (Node::keep_exact). With `from` empty, `id` alone.
  void keep_exact(NodeId id, std::span<const NodeId> from);
  // The same nodes marked to be bootstrapped precisely wherever the planner refreshes them
  // (Node::precise_bootstrap).
  void bootstrap_precisely(NodeId id, std::span<const NodeId> from);

 private:
  // Sets `flag` on `id` and every node on a path from one of `from` to it (`from` excluded).
  void mark_path(NodeId id, std::span<const NodeId> from, bool Node::*flag);

  ckks::ContextPtr context_;
  std::vector<Node> nodes_;
  std::vector<NodeId> inputs_, outputs_;
};

}  // namespace cerium::graph
