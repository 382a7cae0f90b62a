// Bootstrap placement against exhaustive search: on chains, trees and random small graphs, place_bootstraps must
// find a placement as small as the smallest feasible subset, and that placement must be feasible by a level
// evaluation written here independently of the pass.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "cerium/graph/passes/bootstrap_placement.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium::graph;

namespace {

// Levels by the definition: a source's level, or the lowest operand (its bootstrap level if refreshed) minus the
// cost; feasible when no item falls below its min_level and every refreshed item has the input level it needs.
bool feasible_by_definition(const LevelProblem& p, const std::vector<bool>& refresh) {
  std::vector<int> delivered(p.items.size());
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    const LevelItem& item = p.items[i];
    int level = item.start;
    if (item.start < 0) {
      level = 1 << 20;
      for (const auto u : item.inputs) level = std::min(level, delivered[u]);
      level -= item.cost;
    }
    if (level < item.min_level) return false;
    if (item.pinned && !refresh[i]) return false;
    if (refresh[i]) {
      if (p.bootstrap_level < 0 || level < p.bootstrap_min_input || !(item.may_bootstrap || item.pinned)) return false;
      delivered[i] = p.bootstrap_level;
    } else {
      delivered[i] = level;
    }
  }
  return true;
}

// The fewest refreshes over every subset of the items that may be refreshed (pinned ones always on).
std::optional<int> exhaustive_minimum(const LevelProblem& p) {
  std::vector<std::size_t> free;
  for (std::size_t i = 0; i < p.items.size(); ++i) {
    if (p.items[i].may_bootstrap && !p.items[i].pinned) free.push_back(i);
  }
  REQUIRE(free.size() <= 18);
  std::optional<int> best;
  for (std::uint32_t mask = 0; mask < (1u << free.size()); ++mask) {
    const int count = std::popcount(mask);
    if (best && count >= *best) continue;
    std::vector<bool> refresh(p.items.size(), false);
    for (std::size_t i = 0; i < p.items.size(); ++i) refresh[i] = p.items[i].pinned;
    for (std::size_t j = 0; j < free.size(); ++j) refresh[free[j]] = (mask >> j) & 1u;
    if (feasible_by_definition(p, refresh)) best = count;
  }
  return best;
}

void check_against_exhaustive(const LevelProblem& p) {
  const std::optional<int> want = exhaustive_minimum(p);
  const Placement got = place_bootstraps(p);
  if (!want) {
    CHECK_FALSE(got.feasible);
    return;
  }
  REQUIRE(got.feasible);
  CHECK(got.optimal);
  CHECK(got.count == *want);
  CHECK(feasible_by_definition(p, got.bootstrap));
  const Placement greedy = place_bootstraps_greedy(p);
  if (greedy.feasible) CHECK(greedy.count >= *want);
}

LevelProblem chain(int length, int top, int bootstrap_level, std::mt19937_64& rng) {
  LevelProblem p;
  p.bootstrap_level = bootstrap_level;
  p.items.push_back({.inputs = {}, .cost = 0, .start = top});
  std::bernoulli_distribution product(0.7);
  for (int i = 1; i <= length; ++i) {
    p.items.push_back({.inputs = {static_cast<std::uint32_t>(i - 1)}, .cost = product(rng) ? 1 : 0});
  }
  p.items.push_back({.inputs = {static_cast<std::uint32_t>(length)}, .may_bootstrap = false});  // the output
  return p;
}

// Random graphs in topological order: sources at random levels, then operations reading one or two earlier
// items (trees when `tree`: each item read at most once), outputs on the items nobody reads.
LevelProblem random_graph(std::mt19937_64& rng, bool tree, int operations) {
  LevelProblem p;
  std::uniform_int_distribution<int> level(2, 5);
  p.bootstrap_level = std::uniform_int_distribution<int>(2, 4)(rng);
  const int sources = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < sources; ++i) p.items.push_back({.inputs = {}, .cost = 0, .start = level(rng)});
  std::vector<int> readers;
  readers.assign(p.items.size(), 0);
  std::bernoulli_distribution product(0.6), binary(0.4), pin(0.05);
  for (int k = 0; k < operations; ++k) {
    std::vector<std::uint32_t> open;
    for (std::uint32_t i = 0; i < p.items.size(); ++i) {
      if (!tree || readers[i] == 0) open.push_back(i);
    }
    if (open.empty()) break;
    LevelItem item;
    item.cost = product(rng) ? 1 : 0;
    const auto pick = [&] { return open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng)]; };
    const std::uint32_t a = pick();
    item.inputs.push_back(a);
    if (binary(rng)) {
      const std::uint32_t b = pick();
      if (b != a || !tree) item.inputs.push_back(b);
    }
    for (const auto u : item.inputs) ++readers[u];
    item.pinned = pin(rng);
    p.items.push_back(item);
    readers.push_back(0);
  }
  const std::size_t count = p.items.size();
  for (std::uint32_t i = 0; i < count; ++i) {
    if (readers[i] == 0) p.items.push_back({.inputs = {i}, .may_bootstrap = false});
  }
  return p;
}

// One reader of v in an attention's A V in miniature: a mask (a product), replicated by three additions, then
// multiplied twice with w. Returns the last product.
std::uint32_t add_reader(LevelProblem& p, std::uint32_t v, std::uint32_t w) {
  auto at = static_cast<std::uint32_t>(p.items.size());
  p.items.push_back({.inputs = {v}, .cost = 1});
  for (int r = 0; r < 3; ++r, ++at) p.items.push_back({.inputs = {at, at}, .cost = 0});
  p.items.push_back({.inputs = {at, w}, .cost = 1});
  p.items.push_back({.inputs = {at + 1, w}, .cost = 1});
  return at + 2;
}

}  // namespace

TEST_CASE("bootstrap placement on chains is the fewest refreshes (closed form and exhaustive)", "[graph][placement]") {
  auto rng = cerium_test::make_rng(5);
  INFO("test seed " << cerium_test::test_seed());
  // Every operation a product: with k refreshes a chain from level T spends at most T + k (L_b - 1) levels.
  for (const int top : {3, 6, 10}) {
    for (const int lb : {2, 3, 7}) {
      for (const int depth : {0, 1, 5, 17, 40}) {
        LevelProblem p;
        p.bootstrap_level = lb;
        p.items.push_back({.inputs = {}, .cost = 0, .start = top});
        for (int i = 1; i <= depth; ++i) p.items.push_back({.inputs = {static_cast<std::uint32_t>(i - 1)}, .cost = 1});
        p.items.push_back({.inputs = {static_cast<std::uint32_t>(depth)}, .may_bootstrap = false});
        const int want = depth <= top ? 0 : (depth - top + lb - 2) / (lb - 1);
        const Placement got = place_bootstraps(p);
        INFO("top " << top << ", L_b " << lb << ", depth " << depth);
        REQUIRE(got.feasible);
        CHECK(got.optimal);
        CHECK(got.count == want);
        CHECK(feasible_by_definition(p, got.bootstrap));
      }
    }
  }
  for (int trial = 0; trial < 40; ++trial) {
    const LevelProblem p = chain(std::uniform_int_distribution<int>(1, 16)(rng), 3, 3, rng);
    check_against_exhaustive(p);
  }
}

TEST_CASE("bootstrap placement on random trees matches exhaustive search", "[graph][placement]") {
  auto rng = cerium_test::make_rng(6);
  INFO("test seed " << cerium_test::test_seed());
  for (int trial = 0; trial < 60; ++trial) {
    INFO("trial " << trial);
    check_against_exhaustive(random_graph(rng, true, std::uniform_int_distribution<int>(3, 14)(rng)));
  }
}

TEST_CASE("bootstrap placement on random small graphs matches exhaustive search", "[graph][placement]") {
  auto rng = cerium_test::make_rng(7);
  INFO("test seed " << cerium_test::test_seed());
  for (int trial = 0; trial < 80; ++trial) {
    INFO("trial " << trial);
    check_against_exhaustive(random_graph(rng, false, std::uniform_int_distribution<int>(3, 13)(rng)));
  }
}

TEST_CASE("bootstrap placement: no bootstrapper, pins, and where it fails", "[graph][placement]") {
  LevelProblem p;
  p.items.push_back({.inputs = {}, .cost = 0, .start = 2});
  for (std::uint32_t i = 1; i <= 3; ++i) p.items.push_back({.inputs = {i - 1}, .cost = 1});
  p.items.push_back({.inputs = {3}, .may_bootstrap = false});
  Placement none = place_bootstraps(p);  // three products from level 2, nothing to refresh with
  CHECK_FALSE(none.feasible);
  CHECK(none.first_failure == 3);

  p.bootstrap_level = 3;
  const Placement one = place_bootstraps(p);
  REQUIRE(one.feasible);
  CHECK(one.count == 1);

  p.items[1].pinned = true;  // a pin is kept and not counted
  const Placement pinned = place_bootstraps(p);
  REQUIRE(pinned.feasible);
  CHECK(pinned.bootstrap[1]);
  CHECK(pinned.count == 0);
}

TEST_CASE("the greedy rule refreshes before a stretch that may not be refreshed", "[graph][placement]") {
  // s (level 3) -> a (a product, level 2) -> three products kept exact (graph::keep_exact), each of which must
  // keep level 1 (the lowest level a product's scale fits at) -> the output. a is the last item that may be
  // refreshed, and the stretch after it needs four levels: the rule must see that through the stretch.
  LevelProblem p;
  p.bootstrap_level = 6;
  p.items.push_back({.inputs = {}, .cost = 0, .start = 3});
  p.items.push_back({.inputs = {0}, .cost = 1});
  for (std::uint32_t i = 2; i <= 4; ++i) {
    p.items.push_back({.inputs = {i - 1}, .cost = 1, .may_bootstrap = false, .min_level = 1});
  }
  p.items.push_back({.inputs = {4}, .may_bootstrap = false});
  const Placement greedy = place_bootstraps_greedy(p);
  REQUIRE(greedy.feasible);
  CHECK(greedy.count == 1);
  CHECK(greedy.bootstrap[1]);
  check_against_exhaustive(p);
}

TEST_CASE("bootstrap placement on a chain of layers with fan-out finds the chain's minimum", "[graph][placement]") {
  // x_(k+1) = x_k * x_k + x_k * c: every layer reads its input twice (not a forest), spends one level, and joins
  // at one value (a cut); refreshing at cuts makes it a chain, whose minimum has a closed form.
  for (const auto& [layers, top] : {std::pair{4, 2}, std::pair{30, 5}, std::pair{120, 5}}) {
    LevelProblem p;
    p.bootstrap_level = 4;
    p.items.push_back({.inputs = {}, .cost = 0, .start = top});
    std::uint32_t x = 0;
    for (int k = 0; k < layers; ++k) {
      const auto base = static_cast<std::uint32_t>(p.items.size());
      p.items.push_back({.inputs = {x, x}, .cost = 1});  // x * x
      p.items.push_back({.inputs = {x}, .cost = 1});     // x * c
      p.items.push_back({.inputs = {base, base + 1}, .cost = 0});
      x = base + 2;
    }
    p.items.push_back({.inputs = {x}, .may_bootstrap = false});
    const int want = layers <= top ? 0 : (layers - top + 4 - 2) / (4 - 1);
    const Placement got = place_bootstraps(p);
    INFO(layers << " layers");
    REQUIRE(got.feasible);
    CHECK(got.count == want);
    CHECK(feasible_by_definition(p, got.bootstrap));
    if (layers == 4) check_against_exhaustive(p);
  }
}

// An attention's A V in miniature (the two tests below): a softmax output v at level 2 (from x, arriving at 3),
// read by k masks (a product each), each mask replicated by additions at level 1 and then multiplied twice with a
// fresh value w.
namespace {

LevelProblem attention_miniature(std::uint32_t k, bool x_refreshable) {
  LevelProblem p;
  p.bootstrap_level = 6;
  p.items.push_back({.inputs = {}, .cost = 0, .start = 3, .may_bootstrap = x_refreshable});  // x
  p.items.push_back({.inputs = {}, .cost = 0, .start = 9});                                 // w
  p.items.push_back({.inputs = {0}, .cost = 1});                                            // v, level 2
  for (std::uint32_t j = 0; j < k; ++j) {
    const std::uint32_t product = add_reader(p, 2, 1);
    p.items.push_back({.inputs = {product}, .may_bootstrap = false});
  }
  return p;
}

}  // namespace

TEST_CASE("bootstrap placement refreshes a value read by many instead of each reader's path", "[graph][placement]") {
  // The greedy rule refreshes every mask's path where it runs out (k bootstraps); refreshing v once leaves every
  // path enough levels. (x may not be refreshed here: refreshing it would serve as well; the next test has that.)
  for (const std::uint32_t k : {2u, 5u, 40u}) {
    const LevelProblem p = attention_miniature(k, false);
    INFO(k << " readers");
    const Placement greedy = place_bootstraps_greedy(p);
    REQUIRE(greedy.feasible);
    CHECK(greedy.count == static_cast<int>(k));
    const Placement refreshed = place_bootstraps(p, {.search_limit = 0});  // the seed alone
    REQUIRE(refreshed.feasible);
    CHECK(refreshed.count == (k >= 2 ? 1 : static_cast<int>(k)));
    CHECK(refreshed.bootstrap[2]);
    CHECK(feasible_by_definition(p, refreshed.bootstrap));
    const Placement off = place_bootstraps(p, {.search_limit = 0, .refresh_budget = 0});
    CHECK(off.count == static_cast<int>(k));
    if (k == 2) check_against_exhaustive(p);
  }
}

TEST_CASE("bootstrap placement refreshes a low source once when that serves every path below it", "[graph][placement]") {
  // The miniature with x refreshable (a stage's input, arriving low): the greedy rule refreshes each reader's
  // path (k), the low-source seed refreshes x alone.
  for (const std::uint32_t k : {2u, 5u, 40u}) {
    const LevelProblem p = attention_miniature(k, true);
    INFO(k << " readers");
    CHECK(place_bootstraps_greedy(p).count == static_cast<int>(k));
    const Placement seeded = place_bootstraps(p, {.search_limit = 0, .refresh_budget = 0});  // the seeds alone
    REQUIRE(seeded.feasible);
    CHECK(seeded.count == 1);
    CHECK(seeded.bootstrap[0]);
    CHECK(feasible_by_definition(p, seeded.bootstrap));
    if (k == 2) check_against_exhaustive(p);
  }
}

TEST_CASE("refreshing a fan-out point keeps the refresh of a residual that another path holds low", "[graph][placement]") {
  // A transformer's FFN in miniature: v (a norm's output, level 2) read by k projections that run out of levels,
  // and by a residual sum r = v + z with z at level 1 from another path, refreshed for what follows it. Refreshing
  // v serves the k readers but not r (z holds it at level 1): r's refresh stays, and the k go.
  for (const std::uint32_t k : {2u, 4u, 16u}) {
    LevelProblem p;
    p.bootstrap_level = 6;
    p.items.push_back({.inputs = {}, .cost = 0, .start = 3});  // x
    p.items.push_back({.inputs = {}, .cost = 0, .start = 9});  // w
    p.items.push_back({.inputs = {}, .cost = 0, .start = 1});  // z
    p.items.push_back({.inputs = {0}, .cost = 1});             // v, level 2
    for (std::uint32_t j = 0; j < k; ++j) {
      const std::uint32_t product = add_reader(p, 3, 1);
      p.items.push_back({.inputs = {product}, .may_bootstrap = false});
    }
    p.items.push_back({.inputs = {3, 2}, .cost = 0});  // r = v + z, level 1
    const auto r = static_cast<std::uint32_t>(p.items.size() - 1);
    p.items.push_back({.inputs = {r}, .cost = 1});
    p.items.push_back({.inputs = {r + 1}, .cost = 1});
    p.items.push_back({.inputs = {r + 2}, .may_bootstrap = false});
    INFO(k << " readers");
    const Placement greedy = place_bootstraps_greedy(p);
    REQUIRE(greedy.feasible);
    CHECK(greedy.count == static_cast<int>(k) + 1);
    const Placement refreshed = place_bootstraps(p, {.search_limit = 0});  // the seed alone
    REQUIRE(refreshed.feasible);
    CHECK(refreshed.count == 2);
    CHECK(refreshed.bootstrap[3]);
    CHECK(refreshed.bootstrap[r]);
    CHECK(feasible_by_definition(p, refreshed.bootstrap));
  }
}

TEST_CASE("refreshing a fan-out point looks past its readers only as far as levels change", "[graph][placement]") {
  // The readers of the previous test summed, the sum joined with a value at level 2 (where the levels before and
  // after the change meet again) and then a chain of 70,000 sums: the pass must not give up on the region for
  // the chain's length, since nothing in it changes.
  constexpr std::uint32_t k = 40;
  LevelProblem p;
  p.bootstrap_level = 6;
  p.items.push_back({.inputs = {}, .cost = 0, .start = 3});  // x
  p.items.push_back({.inputs = {}, .cost = 0, .start = 9});  // w
  p.items.push_back({.inputs = {}, .cost = 0, .start = 2});  // z
  p.items.push_back({.inputs = {0}, .cost = 1});             // v, level 2
  std::uint32_t sum = 0;
  for (std::uint32_t j = 0; j < k; ++j) {
    const std::uint32_t product = add_reader(p, 3, 1);
    if (j == 0) {
      sum = product;
    } else {
      p.items.push_back({.inputs = {sum, product}, .cost = 0});
      sum = static_cast<std::uint32_t>(p.items.size() - 1);
    }
  }
  p.items.push_back({.inputs = {sum, 2}, .cost = 0});
  for (int i = 0; i < 70000; ++i) {
    const auto last = static_cast<std::uint32_t>(p.items.size() - 1);
    p.items.push_back({.inputs = {last, 2}, .cost = 0});
  }
  p.items.push_back({.inputs = {static_cast<std::uint32_t>(p.items.size() - 1)}, .may_bootstrap = false});
  const Placement refreshed = place_bootstraps(p, {.search_limit = 0});  // the seed alone
  REQUIRE(refreshed.feasible);
  CHECK(refreshed.count == 1);
  CHECK(refreshed.bootstrap[3]);
  CHECK(feasible_by_definition(p, refreshed.bootstrap));
}

TEST_CASE("placement searches graphs far deeper than the thread's stack", "[graph][bootstrap_placement]") {
  // 300,000 items, each reading the one before and the source (so neither a forest nor a chain of cuts): the
  // search went depth-first by recursion, one frame per item, and overflowed the stack (BERT at 256 tokens).
  LevelProblem p;
  p.bootstrap_level = 6;
  p.items.push_back({.inputs = {}, .cost = 0, .start = 6});
  for (std::uint32_t i = 1; i < 300000; ++i) {
    p.items.push_back({.inputs = {i - 1, 0}, .cost = i % 1000 == 0 ? 1 : 0});
  }
  p.items.push_back({.inputs = {299999}, .may_bootstrap = false});
  const Placement got = place_bootstraps(p, {.search_limit = 1u << 20});
  CHECK(got.feasible);
  CHECK(is_feasible(p, got.bootstrap));
}
