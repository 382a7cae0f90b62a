// Bootstraps placed by the planner: a 40-deep chain at N = 2^12 (bootstrappable toy parameters) gets the fewest
// bootstraps a chain can have, runs, and decrypts to the double-precision result within its precision bound.

#include <cmath>
#include <memory>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/passes/levels.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

// x <- x^2 / 2 + 1/4, twenty times: 40 levels of products; it contracts errors (the derivative is x < 1).
constexpr int kSteps = 20;

// The chain traced from an input arriving at `level` (-1: the top) and planned for the bootstrapper.
graph::Plan planned_chain(const ContextPtr& context, const boot::Bootstrapper& bootstrapper, int level = -1) {
  graph::Tracer t(context);
  auto x = t.input("x", 0, level);
  for (int i = 0; i < kSteps; ++i) x = t.add(t.multiply(t.multiply(x, x), 0.5), 0.25);
  t.output(x, "x20");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  return graph::plan(std::move(t).finish(), options);
}

// The chain on doubles.
Values chain_reference(Values values) {
  for (int i = 0; i < kSteps; ++i) {
    for (auto& v : values) v = v * v * 0.5 + 0.25;
  }
  return values;
}

}  // namespace

TEST_CASE("a 40-deep chain at N = 2^12 bootstraps the fewest times and keeps its precision", "[graph][bootstrap][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});  // 8 levels after a bootstrap
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));

  const graph::Plan plan = planned_chain(f.context, bootstrapper);
  INFO(graph::explain(plan));

  const int top = f.context->max_level();
  const int refresh = bootstrapper.levels().output;
  const int depth = 2 * kSteps;
  const int fewest = depth <= top ? 0 : (depth - top + refresh - 2) / (refresh - 1);
  INFO("top " << top << ", bootstrap output level " << refresh);
  CHECK(plan.placed_bootstraps == fewest);
  CHECK(plan.placement_optimal);
  CHECK(plan.keys.steps.empty());

  f.evaluator.set_galois_keys(nullptr);
  auto rng = cerium_test::make_rng(90);
  const Values input = random_real(rng, f.max_slots());
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0))));
  graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper);
  // Profiled: every node reported in order with its time, the bootstraps' share where they happen.
  int bootstraps_seen = 0;
  std::size_t nodes_seen = 0;
  double node_total = 0, bootstrap_total = 0, elapsed = 0;
  const auto outputs = executor.run(
      std::move(inputs),
      [&](const graph::RunProgress& p) {
        CHECK(p.node == nodes_seen);
        CHECK(p.nodes_done == ++nodes_seen);
        CHECK(p.node_seconds >= p.bootstrap_seconds);
        CHECK((p.bootstrap_seconds > 0) == (p.bootstraps_done > bootstraps_seen));
        bootstraps_seen = p.bootstraps_done;
        node_total += p.node_seconds;
        bootstrap_total += p.bootstrap_seconds;
        elapsed = p.elapsed_seconds;
      },
      {.profile = true});
  CHECK(bootstraps_seen == fewest);
  CHECK(nodes_seen == plan.program.size());
  CHECK(bootstrap_total > 0);
  CHECK(node_total <= elapsed);
  CHECK(bootstrap_total <= node_total);

  const double bits = precision_bits(f.decrypt(outputs.at(0)), chain_reference(input));
  INFO("precision " << bits << " bits, seed " << cerium_test::test_seed());
  CHECK(bits >= 14);
}

TEST_CASE("narrow levels: the same chain with 13 levels between bootstraps instead of 7 (N = 2^12)",
          "[graph][bootstrap][narrow][heavy]") {
  CkksConfig config = presets::bootstrappable_toy(12, 16 + 14);
  config.narrow_levels = 14;  // the application's levels: one ~2^30 prime each
  Fixture f(config, {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  REQUIRE(bootstrapper.levels().output == 14);
  // Arriving at the top narrow level, as a bootstrap leaves it.
  const graph::Plan plan = planned_chain(f.context, bootstrapper, 14);
  INFO(graph::explain(plan));
  // 40 levels from level 14: 13 a refresh (the next bootstrap needs level 1), so 2 bootstraps; the wide toy
  // parameters of the test above, 7 a refresh, need 5 from their top.
  CHECK(plan.placed_bootstraps == 2);
  CHECK(plan.placement_optimal);
  auto rng = cerium_test::make_rng(93);
  const Values input = random_real(rng, f.max_slots());
  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0))));
  CHECK(inputs[0].scale() == plan.input_encoding(0).scale);
  graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper);
  const auto outputs = executor.run(std::move(inputs));
  const double bits = precision_bits(f.decrypt(outputs.at(0)), chain_reference(input));
  INFO("precision " << bits << " bits, seed " << cerium_test::test_seed());
  WARN("narrow levels: 40-deep chain, " << plan.placed_bootstraps << " bootstraps, " << bits << " bits");
  CHECK(bits >= 12);
}

TEST_CASE("values far above 1 are bootstrapped scaled down and back up: precision kept", "[graph][bootstrap][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);  // made for |x| <= 1
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  f.evaluator.set_galois_keys(nullptr);

  // y <- y^2 / 8 + 2 from y near 4: every value it holds is 2 or more (16, 2, 4), so every bootstrap refreshes a
  // value above the bootstrapper's bound.
  constexpr int kSteps = 20;
  graph::Tracer t(f.context);
  auto y = t.input("y");
  for (int i = 0; i < kSteps; ++i) y = t.add(t.multiply(t.multiply(y, y), 0.125), 2.0);
  t.output(y, "y20");
  auto rng = cerium_test::make_rng(91);
  Values input = random_real(rng, f.max_slots());
  for (auto& v : input) v = 4.0 + 0.05 * v;
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  options.calibration = {{graph::SlotValues(input.begin(), input.end())}};
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  REQUIRE(plan.placed_bootstraps > 0);
  CHECK(plan.bootstrap_magnitude >= 2);
  CHECK(plan.bootstrap_scaled_magnitude <= 0.8);
  for (const auto& node : plan.nodes) {
    if (node.bootstrap) CHECK(graph::bootstrap_shift(node.magnitude) >= 2);
  }

  std::vector<Ciphertext> inputs;
  inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0))));
  const auto outputs = graph::Executor<backend::CpuBackend>(plan, f.evaluator, &bootstrapper).run(std::move(inputs));
  Values want = input;
  for (int i = 0; i < kSteps; ++i) {
    for (auto& v : want) v = v * v * 0.125 + 2.0;
  }
  const double bits = precision_bits(f.decrypt(outputs.at(0)), want);
  // Each bootstrap's error (about 2^-14 here) times 4 (a shift of 2), carried by a map whose derivative is 1 at
  // y = 4: about 2^-10.5. Without the shift the bootstrapper would return garbage (values 2 beyond its bound 1).
  INFO("precision " << bits << " bits against values near 4, " << plan.placed_bootstraps << " bootstraps");
  CHECK(bits >= 9);
}

// [slow] (14 s here, the bootstrapper's transforms planned at N = 2^12): the sanitizer builds skip it.
TEST_CASE("bootstrap_shift brings a calibrated magnitude into (0.4, 0.8], raising small ones at most 2^10-fold",
          "[graph][bootstrap]") {
  CHECK(graph::bootstrap_shift(0) == 0);   // not calibrated
  CHECK(graph::bootstrap_shift(0.6) == 0);
  CHECK(graph::bootstrap_shift(6.5) == 4);  // 6.5 / 16 = 0.41
  CHECK(graph::bootstrap_shift(0.003) == -8);  // 0.003 x 256 = 0.77
  CHECK(graph::bootstrap_shift(1e-9) == -graph::max_bootstrap_upscale_bits);
  for (const double m : {1e-3, 0.01, 0.2, 0.41, 0.8, 0.81, 3.0, 100.0}) {
    const double seen = std::ldexp(m, -graph::bootstrap_shift(m));
    CHECK(seen > 0.4);
    CHECK(seen <= 0.8);
  }
}

TEST_CASE("products are placed only where their scale fits under Q", "[graph][bootstrap][slow]") {
  // bootstrappable_toy(12, 30): the chain's scale at level 1 is about 2^60 over Q_1 of about 2^118, so a product
  // there (scale 2^120) cannot run; the planner must keep every product at level 2 or above.
  Fixture f(presets::bootstrappable_toy(12, 30), {});
  // Only the plan is looked at: the bootstrapper's diagonals need not be encoded.
  const boot::Bootstrapper bootstrapper(f.context, {.cache_plaintexts = false});
  graph::Tracer t(f.context);
  auto x = t.input("x");
  for (int i = 0; i < 30; ++i) x = t.multiply(t.multiply(x, x), graph::PlainVector(std::vector<double>{0.5}));
  t.output(x, "x");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  const int lowest = graph::lowest_product_level(*f.context, plan.chain, ckks::EvaluatorOptions{}.scale_headroom_bits);
  INFO("lowest product level " << lowest << "; scale at level 1 2^" << std::log2(plan.chain.at(1)) << ", Q_1 2^"
                               << f.context->q_basis(1)->log2_product());
  CHECK(lowest == 2);  // level 1 cannot host a product here
  for (int level = lowest; level <= f.context->max_level(); ++level) {
    CHECK(2 * std::log2(plan.chain.at(level)) + 4 < f.context->q_basis(level)->log2_product());
  }
  for (graph::NodeId id = 0; id < plan.program.size(); ++id) {
    const graph::Node& node = plan.program.node(id);
    if (graph::level_cost(node.op) == 0) continue;
    for (const graph::NodeId input : node.inputs) {
      INFO(plan.program.describe(id));
      CHECK(plan.nodes[input].held_level >= lowest);
    }
  }
}
