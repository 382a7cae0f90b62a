// Placement over ranks: independent branches spread, chains stay on one rank, the bytes moved are counted once
// per receiving rank, and both placements' figures are those of the cost model.
#include <cmath>
#include <string>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/passes/rank_placement.hpp"
#include "cerium/graph/tracer.hpp"
#include "support/catch.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace cerium;
namespace graph = cerium::graph;

namespace {

// Four heads: each rotates and squares the shared input (a branch of key switches), closed by a sum; then a
// chain of products (one rank's work: nothing to gain from spreading it).
graph::Plan four_heads(const ckks::ContextPtr& context) {
  graph::Tracer t(context);
  const auto x = t.input("x", 16);
  std::vector<graph::Value> heads;
  for (int h = 0; h < 4; ++h) {
    auto v = t.rotate(x, h + 1);
    for (int k = 0; k < 3; ++k) v = t.add(t.rotate(v, 2), t.multiply(v, graph::PlainVector(std::vector<double>{0.5})));
    heads.push_back(t.multiply(v, v));
  }
  auto sum = t.add(t.add(heads[0], heads[1]), t.add(heads[2], heads[3]));
  t.label(sum, "attention block");
  auto y = sum;
  for (int k = 0; k < 2; ++k) y = t.multiply(y, graph::PlainVector(std::vector<double>{0.25}));
  t.label(y, "encoder layer");
  t.output(y, "y");
  return graph::plan(std::move(t).finish());
}

}  // namespace

TEST_CASE("placement over ranks spreads independent heads and counts the bytes it moves", "[graph][placement]") {
  const auto context = ckks::Context::create(evaluator_test::toy(11, 8, 1, 2));
  const graph::Plan plan = four_heads(context);
  const std::vector<graph::SegmentBoundary> segments = {{"attention block", "attention"}, {"encoder layer", "ffn"}};

  const graph::RankPlacement one = graph::place_on_ranks(plan, {.ranks = 1}, segments);
  CHECK(one.moved_bytes == 0);
  CHECK(one.limb_parallel_bytes == 0);
  CHECK(one.makespan_seconds == Catch::Approx(one.serial_seconds));
  CHECK(one.efficiency() == Catch::Approx(1.0));

  const graph::RankPlacement four = graph::place_on_ranks(plan, {.ranks = 4}, segments);
  INFO(graph::explain_placement(four));
  // The heads run side by side: more than twice as fast as one rank, every rank busy.
  CHECK(four.makespan_seconds < one.serial_seconds / 2);
  for (double busy : four.busy_seconds) CHECK(busy > 0);
  // Each head's input goes to its rank once and comes back once: far fewer bytes than limb-parallel's gathers.
  CHECK(four.moved_bytes > 0);
  CHECK(four.moved_bytes < four.limb_parallel_bytes);
  CHECK(four.savings() > 0.5);
  REQUIRE(four.segments.size() == 3);  // the output node after the last boundary is "rest"
  CHECK(four.segments[0].name == "attention");
  CHECK(four.segments[1].name == "ffn");
  CHECK(four.segments[2].name == "rest");
  // The chain after the sum stays where the sum is: no byte moves in the FFN segment.
  CHECK(four.segments[1].moved_bytes == 0);
  CHECK(four.segments[1].limb_parallel_bytes > 0);
  CHECK(four.segments[0].moved_bytes + four.segments[1].moved_bytes + four.segments[2].moved_bytes ==
        four.moved_bytes);
  // Limb-parallel bytes: the traffic model's, node by node (here checked in total against a second count).
  std::uint64_t per_segment = 0;
  for (const auto& s : four.segments) per_segment += s.limb_parallel_bytes;
  CHECK(per_segment == four.limb_parallel_bytes);
  CHECK(graph::explain_placement(four).find("4 ranks") != std::string::npos);
}
