#pragma once
// Reading a plan: a table with one row per node (its operation, level, scale, key switches, whether it is
// bootstrapped, the bytes of its value) and a summary (bootstraps, rotation keys and their bytes, peak memory),
// or the graph in Graphviz DOT (`dot -Tsvg plan.dot > plan.svg`), bootstrapped nodes highlighted.

#include <string>

#include "cerium/graph/planner.hpp"

namespace cerium::graph {

// The plan as a table, one row per node, followed by its summary (see the file comment).
std::string explain(const Plan& plan);
// explain()'s closing lines alone: nodes, key switches, bootstraps, rotation keys, memory.
std::string summary(const Plan& plan);
// The plan's graph in Graphviz DOT, bootstrapped nodes highlighted.
std::string to_dot(const Plan& plan);

}  // namespace cerium::graph
