// Bootstraps two at a time (graph/passes/bootstrap_pairs.hpp): the run order by bootstrap epoch keeps every operand
// before its user and the inputs and outputs in order, computes what the trace order computes (the same doubles),
// and lets the bootstraps of independent chains pair where the trace order lets none; every pair has one level,
// shift and slots and no reader before its second value. On ciphertexts (N = 2^12) a paired plan keeps the
// precision of refreshing each value alone.

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/passes/bootstrap_pairs.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

// x <- x^2 / 2 + 1/4, `steps` times on each of `chains` inputs, traced one chain after the other (as a model's
// row blocks are).
graph::Program chains(const ContextPtr& context, int count, int steps) {
  graph::Tracer t(context);
  std::vector<graph::Value> x;
  for (int c = 0; c < count; ++c) x.push_back(t.input("x" + std::to_string(c)));
  for (int c = 0; c < count; ++c) {
    for (int i = 0; i < steps; ++i) x[c] = t.add(t.multiply(t.multiply(x[c], x[c]), 0.5), 0.25);
    t.output(x[c], "y" + std::to_string(c));
  }
  return std::move(t).finish();
}

graph::PlanOptions bootstrapping(const ContextPtr& context, int output_level, bool pair) {
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = output_level,
                                           .output_scale = context->parameters().default_scale_at(output_level),
                                           .min_input_level = 1};
  options.pair_bootstraps = pair;
  return options;
}

// Every pair of the plan: symmetric, of one kind, bootstrapped, and read only after its second value.
void check_pairs(const graph::Plan& plan) {
  const auto readers = plan.program.consumers();
  for (graph::NodeId id = 0; id < plan.program.size(); ++id) {
    const graph::NodePlan& p = plan.nodes[id];
    if (!p.pair) continue;
    const graph::NodeId other = *p.pair;
    INFO(plan.program.describe(id) << " paired with " << plan.program.describe(other));
    REQUIRE(other < plan.program.size());
    CHECK(other != id);
    CHECK(plan.nodes[other].pair == std::optional<graph::NodeId>(id));
    CHECK(p.bootstrap);
    CHECK(p.precise == plan.nodes[other].precise);
    CHECK(p.level == plan.nodes[other].level);
    CHECK(graph::bootstrap_shift(p.magnitude) == graph::bootstrap_shift(plan.nodes[other].magnitude));
    CHECK(plan.program.node(id).slots == plan.program.node(other).slots);
    const graph::NodeId second = std::max(id, other);
    for (const graph::NodeId r : readers[id]) CHECK(r > second);
  }
}

// The program's nodes in the plan's order match the traced ones (operation, slots, operands renumbered).
void check_order(const graph::Program& traced, const graph::Plan& plan) {
  REQUIRE(plan.order.size() == traced.size());
  std::vector<graph::NodeId> position(traced.size());
  std::vector<bool> seen(traced.size());
  for (std::size_t i = 0; i < plan.order.size(); ++i) {
    REQUIRE(plan.order[i] < traced.size());
    CHECK_FALSE(seen[plan.order[i]]);
    seen[plan.order[i]] = true;
    position[plan.order[i]] = static_cast<graph::NodeId>(i);
  }
  for (std::size_t i = 0; i < plan.order.size(); ++i) {
    const graph::Node& before = traced.node(plan.order[i]);
    const graph::Node& after = plan.program.node(static_cast<graph::NodeId>(i));
    CHECK(before.op == after.op);
    CHECK(before.slots == after.slots);
    REQUIRE(before.inputs.size() == after.inputs.size());
    for (std::size_t k = 0; k < before.inputs.size(); ++k) CHECK(position[before.inputs[k]] == after.inputs[k]);
  }
}

std::vector<graph::SlotValues> random_inputs(std::size_t count, std::size_t slots, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-0.5, 0.5);
  std::vector<graph::SlotValues> out(count, graph::SlotValues(slots));
  for (auto& v : out) {
    for (auto& x : v) x = d(rng);
  }
  return out;
}

// Three inputs and 60 operations, each reading one of the last few values (deep chains that cross, so that most
// programs bootstrap on parameters of 4 levels) and, for sums and products, any value.
graph::Program random_deep_program(const ContextPtr& context, std::size_t slots, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  graph::Tracer t(context);
  std::vector<graph::Value> values;
  for (int i = 0; i < 3; ++i) values.push_back(t.input("x" + std::to_string(i), slots));
  const auto below = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  for (int k = 0; k < 60; ++k) {
    const graph::Value a = values[values.size() - 1 - below(std::min<std::size_t>(values.size(), 6))];
    const graph::Value b = values[below(values.size())];
    switch (below(5)) {
      case 0:
      case 1: values.push_back(t.add(t.multiply(a, b), 0.25)); break;
      case 2: values.push_back(t.add(a, b)); break;
      case 3: values.push_back(t.multiply(a, 0.5)); break;
      default: values.push_back(t.rotate(a, static_cast<std::int64_t>(below(slots)))); break;
    }
  }
  t.output(values.back(), "last");
  t.output(values[values.size() / 2], "middle");
  return std::move(t).finish();
}

}  // namespace

TEST_CASE("bootstraps of independent chains pair once the run order follows bootstrap epochs", "[graph][pairs]") {
  const auto context = Context::create(toy(11, 8, 1, 2));
  const graph::Program traced = chains(context, 4, 12);  // 24 levels a chain, 4-level refreshes
  const graph::Plan single = graph::plan(traced, bootstrapping(context, 5, false));
  const graph::Plan paired = graph::plan(traced, bootstrapping(context, 5, true));
  INFO(graph::summary(paired));
  REQUIRE(single.bootstraps() > 0);
  CHECK(single.order.empty());
  CHECK(single.bootstrap_pairs() == 0);
  CHECK(paired.bootstraps() == single.bootstraps());
  CHECK(paired.placement_optimal == single.placement_optimal);
  // Four alike chains: every bootstrap has a partner, half the bootstraps run.
  CHECK(paired.bootstraps() % 2 == 0);
  CHECK(paired.bootstrap_pairs() * 2 == static_cast<std::size_t>(paired.bootstraps()));
  CHECK(paired.bootstrap_runs() == static_cast<std::size_t>(paired.bootstraps()) / 2);
  check_order(traced, paired);
  check_pairs(paired);
  CHECK(graph::summary(paired).find("bootstrap pairs: ") != std::string::npos);
  CHECK(graph::explain(paired).find("paired with node") != std::string::npos);

  // In the trace order each chain reads its refresh at once: nothing pairs.
  std::vector<std::optional<graph::PairableBootstrap>> kinds(traced.size());
  for (graph::NodeId id = 0; id < traced.size(); ++id) {
    if (single.nodes[id].bootstrap) kinds[id] = graph::PairableBootstrap{.level = single.nodes[id].level, .slots = 0};
  }
  const auto partner = graph::pair_bootstraps(traced, kinds);
  for (graph::NodeId id = 0; id < traced.size(); ++id) CHECK(partner[id] == id);

  // The same values in the new order: the simulation's doubles are the trace's exactly.
  const auto inputs = random_inputs(4, context->parameters().max_slots(), 31);
  CHECK(graph::simulate_outputs(paired.program, inputs) == graph::simulate_outputs(traced, inputs));
  // Memory is planned in the run's order.
  CHECK(paired.memory.peak_bytes > 0);
  CHECK(paired.memory.last_use.size() == paired.program.size());
}

TEST_CASE("random programs keep their values and pair only what may pair", "[graph][pairs]") {
  const auto context = Context::create(toy(11, 4, 1, 2));  // 2 levels a refresh: most programs bootstrap
  const std::size_t slots = 8;
  int bootstrapped = 0;
  std::size_t pairs = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const graph::Program traced = random_deep_program(context, slots, seed);
    const graph::Plan single = graph::plan(traced, bootstrapping(context, 3, false));
    const graph::Plan paired = graph::plan(traced, bootstrapping(context, 3, true));
    bootstrapped += single.bootstraps() > 0;
    pairs += paired.bootstrap_pairs();
    INFO("seed " << seed << "\n" << graph::summary(paired));
    CHECK(paired.bootstraps() == single.bootstraps());
    if (!paired.order.empty()) check_order(traced, paired);
    check_pairs(paired);
    CHECK(paired.bootstrap_runs() + paired.bootstrap_pairs() == static_cast<std::size_t>(paired.bootstraps()));
    const auto inputs = random_inputs(3, slots, seed);
    CHECK(graph::simulate_outputs(paired.program, inputs) == graph::simulate_outputs(traced, inputs));
  }
  CHECK(bootstrapped >= 20);
  CHECK(pairs > 0);
}

TEST_CASE("a run order that is not one is rejected", "[graph][pairs]") {
  const auto context = Context::create(toy(11, 8, 1, 2));
  const graph::Program traced = chains(context, 2, 2);
  std::vector<graph::NodeId> order(traced.size());
  for (graph::NodeId id = 0; id < traced.size(); ++id) order[id] = id;
  CHECK(graph::reordered(traced, order).size() == traced.size());
  auto twice = order;
  twice.back() = twice.front();
  CHECK_THROWS_AS(graph::reordered(traced, twice), InvalidArgument);
  auto operand_late = order;
  std::reverse(operand_late.begin(), operand_late.end());  // every user before its operands
  CHECK_THROWS_AS(graph::reordered(traced, operand_late), InvalidArgument);
  auto inputs_swapped = order;
  std::swap(inputs_swapped[0], inputs_swapped[1]);  // both inputs, the second first
  CHECK_THROWS_AS(graph::reordered(traced, inputs_swapped), InvalidArgument);
  CHECK_THROWS_AS(graph::reordered(traced, std::vector<graph::NodeId>(order.begin(), order.end() - 1)), InvalidArgument);
  CHECK_THROWS_AS(graph::bootstrap_epoch_order(traced, std::vector<bool>(3)), InvalidArgument);
}

TEST_CASE("two chains refreshed in pairs at N = 2^12 keep the precision of single bootstraps",
          "[graph][pairs][bootstrap][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  f.evaluator.set_galois_keys(nullptr);
  const graph::Program traced = chains(f.context, 2, 20);
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  options.pair_bootstraps = true;
  const graph::Plan plan = graph::plan(traced, options);
  INFO(graph::summary(plan));
  REQUIRE(plan.bootstraps() >= 2);
  CHECK(plan.bootstrap_pairs() * 2 == static_cast<std::size_t>(plan.bootstraps()));

  auto rng = cerium_test::make_rng(97);
  std::vector<Values> input = {random_real(rng, f.max_slots()), random_real(rng, f.max_slots())};
  std::vector<Ciphertext> inputs;
  for (std::size_t c = 0; c < 2; ++c) {
    inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input[c], plan.input_encoding(c))));
  }
  graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper);
  int refreshed = 0;
  const auto outputs = executor.run(std::move(inputs), [&](const graph::RunProgress& p) { refreshed = p.bootstraps_done; });
  CHECK(refreshed == plan.bootstraps());
  for (std::size_t c = 0; c < 2; ++c) {
    Values want = input[c];
    for (int i = 0; i < 20; ++i) {
      for (auto& v : want) v = v * v * 0.5 + 0.25;
    }
    const double bits = precision_bits(f.decrypt(outputs.at(c)), want);
    INFO("chain " << c << ": precision " << bits << " bits, seed " << cerium_test::test_seed());
    CHECK(bits >= 14);  // as the single chain of test_graph_bootstrap.cpp
  }
}

TEST_CASE("precise bootstraps pair with precise ones and keep their small slots (N = 2^12)",
          "[graph][pairs][bootstrap][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  f.evaluator.set_galois_keys(nullptr);
  // Two chains x times 1.0625 then 1 / 1.0625, 30 times: even slots in [0.4, 0.8], odd slots a thousand times
  // smaller, which one bootstrap's absolute error leaves with a few bits (test_precise_bootstrap.cpp).
  constexpr int kSteps = 30;
  graph::Tracer t(f.context);
  std::array<graph::Value, 2> x = {t.input("x"), t.input("y")};
  for (auto& v : x) {
    for (int i = 0; i < kSteps; ++i) v = t.multiply(v, i % 2 == 0 ? 1.0625 : 1 / 1.0625);
  }
  t.output(x[0], "x");
  t.output(x[1], "y");
  const graph::Program traced = std::move(t).finish();
  auto rng = cerium_test::make_rng(98);
  std::array<Values, 2> input;
  for (auto& in : input) {
    in = random_real(rng, f.max_slots());
    for (std::size_t i = 0; i < in.size(); ++i) {
      const double u = 0.6 + 0.2 * in[i].real();
      in[i] = i % 2 == 0 ? u : 1e-3 * u;
    }
  }
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  options.calibration = {{graph::SlotValues(input[0].begin(), input[0].end()),
                          graph::SlotValues(input[1].begin(), input[1].end())}};
  options.pair_bootstraps = true;
  // The worst of the two outputs' small slots, relative to each slot's size, in bits.
  const auto small_slot_bits = [&](const graph::Plan& plan) {
    std::vector<Ciphertext> inputs;
    for (std::size_t c = 0; c < 2; ++c) {
      inputs.push_back(f.encryptor.encrypt(f.encoder.encode(input[c], plan.input_encoding(c))));
    }
    graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, &bootstrapper);
    const auto outputs = executor.run(std::move(inputs));
    double worst = 0;
    for (std::size_t c = 0; c < 2; ++c) {
      const Values got = f.decrypt(outputs.at(c));
      for (std::size_t i = 1; i < got.size(); i += 2) {
        double want = input[c][i].real();
        for (int k = 0; k < kSteps; ++k) want *= k % 2 == 0 ? 1.0625 : 1 / 1.0625;
        worst = std::max(worst, std::abs(got[i].real() - want) / std::abs(want));
      }
    }
    return -std::log2(worst);
  };
  const graph::Plan plain = graph::plan(traced, options);
  options.precise_bootstraps = true;
  const graph::Plan precise = graph::plan(traced, options);
  INFO(graph::summary(precise));
  REQUIRE(precise.bootstraps() >= 2);
  CHECK(precise.bootstrap_pairs() * 2 == static_cast<std::size_t>(precise.bootstraps()));
  CHECK(precise.bootstrap_runs() == static_cast<std::size_t>(precise.bootstraps()));  // two a pair
  check_pairs(precise);
  const double plain_bits = small_slot_bits(plain), precise_bits = small_slot_bits(precise);
  INFO("small slots: " << plain_bits << " bits with pairs of bootstraps, " << precise_bits
                       << " with pairs of precise ones; seed " << cerium_test::test_seed());
  CHECK(precise_bits >= plain_bits + 6);
  CHECK(precise_bits >= 10);
}
