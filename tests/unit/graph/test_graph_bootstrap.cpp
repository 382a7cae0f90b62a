// Bootstraps placed by the planner: a 40-deep chain at N = 2^12 (bootstrappable toy parameters) gets the fewest
// bootstraps a chain can have, runs, and decrypts to the double-precision result within its precision bound.

#include <cmath>
#include <memory>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

TEST_CASE("a 40-deep chain at N = 2^12 bootstraps the fewest times and keeps its precision", "[graph][bootstrap]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});  // 8 levels after a bootstrap
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));

  // x <- x^2 / 2 + 1/4, twenty times: 40 levels of products; it contracts errors (the derivative is x < 1).
  constexpr int kSteps = 20;
  graph::Tracer t(f.context);
  auto x = t.input("x");
  for (int i = 0; i < kSteps; ++i) x = t.add(t.multiply(t.multiply(x, x), 0.5), 0.25);
  t.output(x, "x20");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
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

  Values want = input;
  for (int i = 0; i < kSteps; ++i) {
    for (auto& v : want) v = v * v * 0.5 + 0.25;
  }
  const double bits = precision_bits(f.decrypt(outputs.at(0)), want);
  INFO("precision " << bits << " bits, seed " << cerium_test::test_seed());
  CHECK(bits >= 14);
}
