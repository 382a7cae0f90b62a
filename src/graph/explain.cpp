#include "cerium/graph/explain.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cerium::graph {
namespace {

std::string mib(std::size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

std::string operands(const Node& node) {
  std::string out;
  // A product sum's first pair and the count (its detail); the rest would fill the line.
  const std::size_t shown = node.op == Op::product_sum ? 2 : node.inputs.size();
  for (std::size_t i = 0; i < shown; ++i) out += (out.empty() ? "" : ", ") + fmt::format("{}", node.inputs[i]);
  if (shown < node.inputs.size()) out += ", ...";
  return out;
}

std::string detail(const Node& node) {
  switch (node.op) {
    case Op::rotate: return fmt::format("steps {}", node.steps);
    case Op::multiply_constant: return fmt::format("c = {}", node.constant.real());
    case Op::add_constant: return fmt::format("c = ({}, {})", node.constant.real(), node.constant.imag());
    case Op::product_sum: return fmt::format("{} products, one relinearization", node.inputs.size() / 2);
    case Op::multiply_plain:
    case Op::add_plain:
      return fmt::format("plaintext, period {}{}", node.plain.period(), node.plain.generated() ? ", generated" : "");
    default: return "";
  }
}

}  // namespace

std::string explain(const Plan& plan) {
  const Program& program = plan.program;
  std::string out = fmt::format("{:>5}  {:<18} {:<10} {:>5} {:>8} {:>3} {:>10}  {}\n", "node", "operation", "operands",
                                "level", "log2 sc", "ks", "bytes", "notes");
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    const NodePlan& p = plan.nodes[id];
    std::string notes = detail(node);
    if (!node.name.empty()) notes = fmt::format("'{}' {}", node.name, notes);
    if (p.bootstrap) notes += fmt::format(" -> {}bootstrap to level {}", p.precise ? "precise " : "", p.held_level);
    if (p.pair) notes += fmt::format(" (paired with node {})", *p.pair);
    out += fmt::format("{:>5}  {:<18} {:<10} {:>5} {:>8.3f} {:>3} {:>10}  {}\n", id, to_string(node.op),
                       operands(node), p.level, std::log2(p.scale), key_switches(node.op),
                       plan.memory.value_bytes[id] ? mib(plan.memory.value_bytes[id]) : "-", notes);
  }
  return out + summary(plan);
}

std::string summary(const Plan& plan) {
  const Program& program = plan.program;
  std::string out;
  const std::size_t precise = plan.precise_bootstraps();
  out += fmt::format("{} nodes, {} key switches; bootstraps: {} placed ({}) + {} pinned{}\n", program.size(),
                     plan.key_switches(), plan.placed_bootstraps, plan.placement_optimal ? "optimal" : "best found",
                     plan.pinned_bootstraps, precise != 0 ? fmt::format(", {} of them precise", precise) : "");
  if (const std::size_t pairs = plan.bootstrap_pairs(); pairs != 0) {
    out += fmt::format("bootstrap pairs: {} (two values refreshed by one bootstrap), {} bootstraps run\n", pairs,
                       plan.bootstrap_runs());
  }
  std::string steps;
  for (const auto s : plan.keys.steps) steps += (steps.empty() ? "" : ", ") + fmt::format("{}", s);
  out += fmt::format("rotation keys: {} ({}{}), {}\n", plan.keys.galois_elements.size(),
                     steps.empty() ? "no rotations" : "steps " + steps, plan.keys.conjugation ? ", conjugation" : "",
                     mib(plan.keys.bytes));
  out += fmt::format("peak live ciphertexts: {} at node {}; plaintexts stored {} ({} if fully encoded); {} "
                     "hoisted rotation group(s)\n",
                     mib(plan.memory.peak_bytes), plan.memory.peak_node, mib(plan.plaintext_bytes),
                     mib(plan.plaintext_encoded_bytes), plan.hoisting.groups.size());
  if (std::isfinite(plan.smallest_headroom_bits)) {
    const NodeId id = plan.smallest_headroom_node;
    out += fmt::format("headroom: values stay {:.1f} bits below Q / 2 at least ({}: |x| up to {:.3g} at level {})\n",
                       plan.smallest_headroom_bits, program.describe(id), plan.nodes[id].magnitude,
                       plan.nodes[id].level);
  }
  const PlanTimings& t = plan.timings;
  out += fmt::format("planned in {:.2f} s: calibration {:.2f} s, placement {:.2f} s, pairs and order {:.2f} s, the "
                     "rest {:.2f} s\n",
                     t.total(), t.simulation, t.placement, t.ordering, t.rest);
  return out;
}

std::string to_dot(const Plan& plan) {
  const Program& program = plan.program;
  std::string out = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    const NodePlan& p = plan.nodes[id];
    std::string label = fmt::format("{} {}\\nlevel {}", id, to_string(node.op), p.level);
    if (!node.name.empty()) label += fmt::format("\\n'{}'", node.name);
    const std::string extra = detail(node);
    if (!extra.empty()) label += "\\n" + extra;
    std::string style;
    if (p.bootstrap) {
      label += fmt::format("\\n{}bootstrap -> {}", p.precise ? "precise " : "", p.held_level);
      if (p.pair) label += fmt::format("\\npaired with {}", *p.pair);
      style = p.precise ? ", style=filled, fillcolor=\"#ffa64d\"" : ", style=filled, fillcolor=\"#ffd27f\"";
    }
    out += fmt::format("  n{} [label=\"{}\"{}];\n", id, label, style);
    for (const NodeId input : node.inputs) out += fmt::format("  n{} -> n{};\n", input, id);
  }
  out += "}\n";
  return out;
}

}  // namespace cerium::graph
