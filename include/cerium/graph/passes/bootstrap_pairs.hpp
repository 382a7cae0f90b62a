#pragma once
// Bootstraps two at a time: two real values bootstrapped as one complex one (boot::BasicBootstrapper::
// bootstrap_pair: Re a + i Re b, one bootstrap and two conjugations for two). Two bootstraps pair when neither value depends
// on the other's refresh and both are computed before either is read. A traced program rarely allows that in its
// trace order (a model's row blocks are traced one after the other, each reading its own refreshes at once), so
// this pass first gives the program a run order in which they do: every node in its bootstrap epoch (the most
// refreshes on a path from an input to it), the nodes of one epoch in trace order, so that every bootstrap of an
// epoch is computed before any node of the next reads one. Then it pairs, in that order, each bootstrap with the
// next one of the same kind (level, shift, slots) whose value comes before the first's first reader.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "cerium/graph/program.hpp"

namespace cerium::graph {

// What must match for two bootstraps to run as one: the level they are bootstrapped at (their scale follows from
// it), their bootstrap_shift, their slots, and whether they are precise (a precise pair runs both of its steps as
// pairs).
struct PairableBootstrap {
  int level = 0;          // the level of the value bootstrapped
  int shift = 0;          // its graph::bootstrap_shift
  std::size_t slots = 0;  // its slots
  bool precise = false;   // a precise bootstrap (NodePlan::precise)
  // Kinds in a map's order.
  auto operator<=>(const PairableBootstrap&) const = default;
};

// A run order (the nodes' trace ids, each once) in which every operand comes before its user, the inputs first and
// the outputs last, each in trace order, and the other nodes by bootstrap epoch (bootstrapped: per node, whether
// it is refreshed after it), in trace order within one.
std::vector<NodeId> bootstrap_epoch_order(const Program& program, const std::vector<bool>& bootstrapped);

// The program with its nodes in `order` (a run order of all its nodes, as bootstrap_epoch_order gives), renumbered:
// node i of the result is node order[i] of `program`, reading the renumbered operands. InvalidArgument for an order
// that is not one (a node missing or twice, an operand after its user, inputs or outputs out of their order).
Program reordered(const Program& program, std::span<const NodeId> order);

// Per node: the node its bootstrap runs with, or itself (unpaired, or not bootstrapped). bootstraps: per node,
// its kind when it is bootstrapped, else nullopt. Each pair (x, y), x
// before y, has one kind and no reader of x comes before y: the run holds x's value until y's and refreshes both.
std::vector<NodeId> pair_bootstraps(const Program& program,
                                    const std::vector<std::optional<PairableBootstrap>>& bootstraps);

}  // namespace cerium::graph
