#pragma once
// The level pass: a program's level problem (what each node spends, where inputs arrive, which bootstraps are
// pinned, what outputs must keep), and the typed error for a program that runs out of levels.

#include <cstdint>
#include <vector>

#include "cerium/circuits/scale_chain.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/graph/passes/bootstrap_placement.hpp"
#include "cerium/graph/program.hpp"

namespace cerium::graph {

// What the level pass needs to know of the bootstrapper and the outputs.
struct LevelRules {
  int bootstrap_level = -1;     // the level a bootstrap delivers (-1: no bootstrapper)
  int bootstrap_min_input = 1;  // the level its input needs
  int output_level = 0;         // the level every output keeps at least
  // The lowest level a product may run at: below it the product's scale (the level's scale squared on the plan's
  // chain) leaves the evaluator too little headroom under Q (lowest_product_level).
  int product_min_level = 1;
};

// The lowest level at which, and above which, a product of two values on `chain` fits under Q with
// `headroom_bits` to spare (what the evaluator checks at run time); max_level + 1 when none does.
int lowest_product_level(const ckks::Context& context, const circuits::ScaleChain& chain, int headroom_bits);

// One item per node, in the program's order: inputs arrive at their level, products spend one level and run at
// product_min_level at least, pinned bootstraps are pinned, outputs are never bootstrapped and keep output_level.
LevelProblem level_problem(const Program& program, const LevelRules& rules);

// LevelError naming the node where `placement` fails (its level, what it needs, and what to change), or a pinned
// bootstrap without a bootstrapper. Returns when the placement is feasible.
void require_feasible(const Program& program, const LevelProblem& problem, const Placement& placement);

}  // namespace cerium::graph
