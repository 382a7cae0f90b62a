// Precise bootstraps (graph::ChainOps::bootstrap_precise, Node::precise_bootstrap, PlanOptions::precise_bootstraps):
// a value whose slots span three orders of magnitude goes through a chain the planner must refresh; with one
// bootstrap each the small slots keep a few bits relative to their size, with precise ones about ten more, and the
// planner marks exactly the bootstraps it was asked to.

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

constexpr int kSteps = 30;  // products by constants: more levels than the toy parameters have

// x times 1.0625 then 1 / 1.0625, kSteps times over; with the second half marked precise when asked.
graph::Program chain(const ContextPtr& context, bool mark_second_half) {
  graph::Tracer t(context);
  auto x = t.input("x");
  std::vector<graph::Value> half;
  for (int i = 0; i < kSteps; ++i) {
    if (i == kSteps / 2) half.push_back(x);
    x = t.multiply(x, i % 2 == 0 ? 1.0625 : 1 / 1.0625);
  }
  if (mark_second_half) graph::bootstrap_precisely(t, x, std::span<const graph::Value>(half));
  t.output(x, "x");
  return std::move(t).finish();
}

// The largest error relative to each slot's own size, in bits, over the small slots (odd slots).
double small_slot_bits(const Values& got, const Values& want) {
  double worst = 0;
  for (std::size_t i = 1; i < want.size(); i += 2) {
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::abs(want[i]));
  }
  return -std::log2(worst);
}

}  // namespace

TEST_CASE("precise bootstraps keep small slots beside large ones; the planner marks those asked for",
          "[graph][bootstrap][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  f.evaluator.set_galois_keys(nullptr);

  // Even slots in [0.4, 0.8], odd slots a thousand times smaller: one bootstrap's absolute error, made for the
  // large ones, is about 2^-14 x 0.8 / 0.0004 = 2^-3.3 relative on the small ones.
  auto rng = cerium_test::make_rng(93);
  Values input = random_real(rng, f.max_slots());
  for (std::size_t i = 0; i < input.size(); ++i) {
    const double u = 0.6 + 0.2 * input[i].real();
    input[i] = i % 2 == 0 ? u : 1e-3 * u;
  }
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  options.calibration = {{graph::SlotValues(input.begin(), input.end())}};

  const auto run = [&](const graph::Plan& plan) {
    std::vector<Ciphertext> inputs;
    inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0))));
    graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper);
    return f.decrypt(executor.run(std::move(inputs)).at(0));
  };
  Values want = input;
  for (int i = 0; i < kSteps; ++i) {
    for (auto& v : want) v *= i % 2 == 0 ? 1.0625 : 1 / 1.0625;
  }

  const graph::Plan plain = graph::plan(chain(f.context, false), options);
  REQUIRE(plain.placed_bootstraps >= 1);
  CHECK(plain.precise_bootstraps() == 0);
  options.precise_bootstraps = true;
  const graph::Plan precise = graph::plan(chain(f.context, false), options);
  INFO(graph::explain(precise));
  CHECK(precise.placed_bootstraps == plain.placed_bootstraps);  // the same placement, each bootstrap made precise
  CHECK(precise.precise_bootstraps() == static_cast<std::size_t>(precise.placed_bootstraps));
  CHECK(graph::explain(precise).find("precise bootstrap to level") != std::string::npos);
  CHECK(graph::to_dot(precise).find("precise bootstrap ->") != std::string::npos);

  const double plain_bits = small_slot_bits(run(plain), want);
  const double precise_bits = small_slot_bits(run(precise), want);
  INFO("small slots, relative: " << plain_bits << " bits with one bootstrap each, " << precise_bits
                                 << " with precise ones; " << plain.placed_bootstraps << " bootstraps; seed "
                                 << cerium_test::test_seed());
  CHECK(precise_bits >= plain_bits + 6);
  CHECK(precise_bits >= 10);

  // Only the marked stretch: its bootstraps precise, the others not.
  options.precise_bootstraps = false;
  const graph::Plan marked = graph::plan(chain(f.context, true), options);
  std::size_t marked_precise = 0;
  for (graph::NodeId id = 0; id < marked.program.size(); ++id) {
    const graph::NodePlan& p = marked.nodes[id];
    if (!p.bootstrap) continue;
    INFO(marked.program.describe(id));
    CHECK(p.precise == marked.program.node(id).precise_bootstrap);
    marked_precise += p.precise ? 1 : 0;
  }
  CHECK(marked_precise == marked.precise_bootstraps());
  // Marked: the products after the first kSteps / 2 (the stretch's start is not), nothing else.
  std::size_t products = 0;
  for (graph::NodeId id = 0; id < marked.program.size(); ++id) {
    const graph::Node& node = marked.program.node(id);
    const bool product = node.op != graph::Op::input && node.op != graph::Op::output;
    if (product) ++products;
    INFO(marked.program.describe(id));
    CHECK(node.precise_bootstrap == (product && products > kSteps / 2));
  }
  CHECK(products == kSteps);
}
