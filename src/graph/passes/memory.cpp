#include "cerium/graph/passes/memory.hpp"

#include <cstdint>

#include "cerium/core/check.hpp"

namespace cerium::graph {

MemoryPlan plan_memory(const Program& program, const std::vector<int>& levels, const std::vector<NodeId>& born) {
  require(levels.size() == program.size(), "memory plan: {} levels for {} nodes", levels.size(), program.size());
  require(born.empty() || born.size() == program.size(), "memory plan: {} births for {} nodes", born.size(),
          program.size());
  const auto& context = *program.context();
  const std::size_t n = program.size();
  MemoryPlan plan;
  plan.last_use.resize(n);
  plan.value_bytes.assign(n, 0);
  for (NodeId id = 0; id < n; ++id) {
    plan.last_use[id] = id;
    const Node& node = program.node(id);
    if (node.op != Op::output) {
      plan.value_bytes[id] = 2 * context.limbs_at(levels[id]) * context.ring_degree() * sizeof(std::uint32_t);
    }
    for (const NodeId input : node.inputs) plan.last_use[input] = id;
  }
  // Walk the program: a value is live from its node to its last use (outputs hand theirs to the caller: live to
  // the end, counted at their operand).
  std::vector<std::vector<NodeId>> dies_at(n), born_at(n);
  for (NodeId id = 0; id < n; ++id) {
    dies_at[plan.last_use[id]].push_back(id);
    born_at[born.empty() ? id : born[id]].push_back(id);
  }
  std::vector<bool> returned(n, false);
  for (const NodeId out : program.outputs()) returned[program.node(out).inputs[0]] = true;
  std::size_t live = 0;
  for (NodeId id = 0; id < n; ++id) {
    for (const NodeId value : born_at[id]) live += plan.value_bytes[value];
    if (live > plan.peak_bytes) {
      plan.peak_bytes = live;
      plan.peak_node = id;
    }
    for (const NodeId dead : dies_at[id]) {
      if (!returned[dead]) live -= plan.value_bytes[dead];
    }
  }
  return plan;
}

namespace {
double mib(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }
}  // namespace

void require_within_budget(const Program& program, const MemoryPlan& memory, std::size_t budget,
                           std::size_t key_bytes, std::size_t switching_key_bytes) {
  if (budget == 0) return;
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    std::size_t need = memory.value_bytes[id];
    for (const NodeId input : node.inputs) need += memory.value_bytes[input];
    if (key_switches(node.op) > 0) need += switching_key_bytes;
    require<OutOfMemoryError>(need <= budget,
                              "plan: {} needs {:.1f} MiB at once (operands, result and the switching key it reads), "
                              "more than the device budget of {:.1f} MiB (PlanOptions::memory_budget_bytes)",
                              program.describe(id), mib(need), mib(budget));
  }
  require<OutOfMemoryError>(memory.peak_bytes + key_bytes <= budget,
                            "plan: at {} the live ciphertexts ({:.1f} MiB) and the resident keys ({:.1f} MiB) need "
                            "{:.1f} MiB, more than the device budget of {:.1f} MiB (PlanOptions::memory_budget_bytes); "
                            "use fewer rotation keys (seeded keys halve them) or a larger budget",
                            program.describe(memory.peak_node), mib(memory.peak_bytes), mib(key_bytes),
                            mib(memory.peak_bytes + key_bytes), mib(budget));
}

}  // namespace cerium::graph
