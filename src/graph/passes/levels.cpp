#include "cerium/graph/passes/levels.hpp"

#include <cmath>
#include <string>

#include "cerium/core/check.hpp"

namespace cerium::graph {

LevelProblem level_problem(const Program& program, const LevelRules& rules) {
  LevelProblem problem;
  problem.bootstrap_level = rules.bootstrap_level;
  problem.bootstrap_min_input = rules.bootstrap_min_input;
  problem.items.reserve(program.size());
  for (NodeId id = 0; id < program.size(); ++id) {
    const Node& node = program.node(id);
    LevelItem item;
    item.inputs.assign(node.inputs.begin(), node.inputs.end());
    item.cost = level_cost(node.op);
    if (item.cost > 0) item.min_level = rules.product_min_level - item.cost;  // the level it leaves
    if (node.op == Op::input) item.start = node.input_level;
    if (node.op == Op::bootstrap) {
      require<LevelError>(rules.bootstrap_level >= 0,
                          "plan: {} is a bootstrap pinned by hand, but no bootstrapper was given "
                          "(PlanOptions::bootstrap)",
                          program.describe(id));
      item.pinned = true;
    }
    if (node.keep_exact) item.may_bootstrap = false;
    if (node.op == Op::output) {
      item.may_bootstrap = false;
      item.min_level = rules.output_level;
    }
    problem.items.push_back(std::move(item));
  }
  return problem;
}

int lowest_product_level(const ckks::Context& context, const circuits::ScaleChain& chain, int headroom_bits) {
  int lowest = context.max_level() + 1;
  for (int level = context.max_level(); level >= 1; --level) {
    if (2 * std::log2(chain.at(level)) + headroom_bits >= context.q_basis(level)->log2_product()) break;
    lowest = level;
  }
  return lowest;
}

void require_feasible(const Program& program, const LevelProblem& problem, const Placement& placement) {
  if (placement.feasible) return;
  const NodeId id = placement.first_failure;
  const std::vector<int> levels = natural_levels(problem, placement.bootstrap);
  const LevelItem& item = problem.items[id];
  const int top = program.context()->max_level();
  const std::string remedy =
      problem.bootstrap_level < 0
          ? "give a bootstrapper (PlanOptions::bootstrap) or parameters with more levels (top level " +
                std::to_string(top) + ")"
          : "a bootstrap delivers level " + std::to_string(problem.bootstrap_level) +
                ", which is not enough between two refreshes: use a bootstrapper that leaves more levels";
  if (item.pinned && levels[id] < problem.bootstrap_min_input) {
    throw LevelError(fmt::format("plan: {} bootstraps a value at level {}; a bootstrap needs level {} at least: {}",
                                 program.describe(id), levels[id], problem.bootstrap_min_input, remedy));
  }
  throw LevelError(fmt::format("plan: {} would run at level {} and needs level {} at least: the program needs more "
                               "levels than it has; {}",
                               program.describe(id), levels[id], item.min_level, remedy));
}

}  // namespace cerium::graph
