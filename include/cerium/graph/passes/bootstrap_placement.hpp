#pragma once
// Bootstrap placement: the fewest bootstraps such that no operation runs out of levels.
//
// The problem, apart from CKKS: items in topological order, each either a source arriving at a level or an
// operation whose level is the lowest of its operands' minus its cost (1 for a product's rescale, 0 otherwise).
// Bootstrapping an item (which needs its level to be at least bootstrap_min_input) makes it available at
// bootstrap_level to every consumer. A placement is feasible when every item's level is at least its min_level.
//
// Algorithms, exact where it matters:
//  - a forest (every item read at most once: chains, expression trees): dynamic programming over (item, level
//    demanded of it), O(items x levels), optimal;
//  - any other graph: depth-first branch and bound over the items (bootstrap or not), seeded with the better of
//    a greedy placement and a dynamic program over the graph's cuts (items every later one is reached through:
//    a model's layer boundaries; refreshing only there makes the graph a chain), optimal when it finishes within
//    `search_limit` steps; otherwise the best placement found, and Placement::optimal says so. Before the search,
//    the seed is improved where a value read by several consumers can be refreshed once in place of two or more
//    bootstraps below it (the greedy rule refreshes each reader's path separately).
// The greedy rule alone (refresh a value at the last level it can still be bootstrapped, when what follows it
// needs more levels than it has) is exposed for comparison.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cerium::graph {

// One item of a level problem (see the file comment): a source or an operation.
struct LevelItem {
  std::vector<std::uint32_t> inputs;  // earlier items
  int cost = 0;                       // levels the operation spends
  int start = -1;                     // a source: the level it arrives at (>= 0); -1 for an operation
  bool pinned = false;                // a bootstrap placed by hand: always bootstrapped, not counted
  bool may_bootstrap = true;          // false for outputs and plaintext-free sinks the planner must not touch
  int min_level = 0;                  // the level the item must keep (an output's demand)
};

// The items in topological order, and what bootstrapping offers them.
struct LevelProblem {
  std::vector<LevelItem> items;  // topological: inputs before their readers
  int bootstrap_level = -1;      // the level a bootstrap delivers; -1: no bootstrapping available
  int bootstrap_min_input = 1;   // the level a bootstrap's input needs
};

// A solution of a level problem: which items are bootstrapped.
struct Placement {
  std::vector<bool> bootstrap;  // per item (pinned items included, as true)
  int count = 0;                // bootstraps placed (pinned ones not counted)
  bool optimal = false;         // proven minimal: the search finished
  bool feasible = false;        // false: no placement exists (the reason: first_failure)
  std::uint32_t first_failure = 0;  // with feasible false: the first item that runs out of levels
};

// The level of every item under a placement: what it carries before its own bootstrap, if any.
std::vector<int> natural_levels(const LevelProblem& problem, const std::vector<bool>& bootstrap);
// True when every item keeps its min_level and every bootstrapped item has the input level it needs; otherwise
// false with the first failing item in *failure (when given).
bool is_feasible(const LevelProblem& problem, const std::vector<bool>& bootstrap, std::uint32_t* failure = nullptr);

// Limits of place_bootstraps' search.
struct PlacementOptions {
  std::size_t search_limit = std::size_t{1} << 22;  // branch-and-bound steps for graphs that are not forests
  // Item visits for refreshing fan-out points (a value read by several consumers bootstrapped once in place of
  // two or more bootstraps below it) before the search; 0: none.
  std::size_t refresh_budget = std::size_t{1} << 28;
};

// The fewest bootstraps (see the file comment), or the best found within options.search_limit.
Placement place_bootstraps(const LevelProblem& problem, const PlacementOptions& options = {});
// The greedy rule alone, for comparison.
Placement place_bootstraps_greedy(const LevelProblem& problem);

}  // namespace cerium::graph
