// A traced program simulated on doubles gives, node by node, what the plaintext twin computes; with calibration
// inputs the planner keeps its bootstraps off large values, raising its limit only where nothing else fits.

#include <cmath>
#include <complex>
#include <random>
#include <span>
#include <vector>

#include "cerium/ckks/context.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "graph_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace graph_test;

namespace {

ckks::ContextPtr toy_context(int levels) {
  return ckks::Context::create({.log_n = 11, .levels = levels, .level_width = 2, .level_prime_bits = 28, .dnum = 2,
                                .insecure_opt_out = true});
}

Slots random_slots(std::mt19937_64& rng, std::size_t n, double bound) {
  std::uniform_real_distribution<double> d(-bound, bound);
  Slots v(n);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

// x -> x^2 -> 64 x^2 (large) -> its square (larger) -> back down by 1 / 4096 -> squared four times more.
template <class Ops>
typename Ops::Value swelling_chain(Ops& ops, const typename Ops::Value& x) {
  auto big = ops.multiply(ops.multiply(x, x), 64.0);
  auto bigger = ops.multiply(big, big);
  auto small = ops.multiply(bigger, 1.0 / 4096);
  auto s2 = ops.multiply(small, small);
  auto s3 = ops.multiply(s2, s2);
  auto s4 = ops.multiply(s3, s3);
  return ops.multiply(s4, s4);
}

}  // namespace

TEST_CASE("simulating a traced program gives the twin's values", "[graph][simulate]") {
  auto rng = cerium_test::make_rng(611);
  INFO("test seed " << cerium_test::test_seed());
  const auto context = toy_context(8);
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const ProgramShape shape{.seed = seed, .operations = 14, .depth = 4, .slots = 8};
    const std::vector<Slots> inputs = {random_slots(rng, 8, 0.5), random_slots(rng, 8, 0.5)};
    graph::Tracer t(context);
    random_program(t, {t.input("a", 8), t.input("b", 8)}, shape);
    const graph::Program program = std::move(t).finish();
    ReferenceOps twin;
    random_program(twin, inputs, shape);
    const auto values = graph::simulate(program, inputs);
    REQUIRE(values.size() == program.size());
    std::size_t k = 0;
    for (const graph::NodeId out : program.outputs()) {
      for (std::size_t i = 0; i < 8; ++i) CHECK(std::abs(values[out][i] - twin.outputs.at(k)[i]) < 1e-12);
      ++k;
    }
    const auto magnitudes = graph::simulate_magnitudes(program, {inputs});
    for (std::size_t id = 0; id < values.size(); ++id) {
      double m = 0;
      for (const auto& x : values[id]) m = std::max(m, std::abs(x));
      CHECK(std::abs(magnitudes[id] - m) <= 1e-15 * m);  // sqrt(|x|^2) against hypot: an ulp apart
    }
  }
  graph::Tracer t(context);
  t.output(t.input("x", 8), "y");
  CHECK_THROWS_AS(graph::simulate(std::move(t).finish(), {}), MismatchError);
}

TEST_CASE("the simulation on several threads gives one thread's values and magnitudes", "[graph][simulate]") {
  auto rng = cerium_test::make_rng(613);
  INFO("test seed " << cerium_test::test_seed());
  // 8192 slots: above the size below which a node stays on one thread, in parts that do not align with the
  // plaintexts' periods or the rotations.
  const auto context = ckks::Context::create(
      {.log_n = 14, .levels = 8, .level_width = 2, .level_prime_bits = 28, .dnum = 2, .insecure_opt_out = true});
  const std::size_t slots = 8192;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const ProgramShape shape{.seed = seed, .operations = 30, .depth = 4, .slots = slots};
    graph::Tracer t(context);
    random_program(t, {t.input("a", slots), t.input("b", slots)}, shape);
    const graph::Program program = std::move(t).finish();
    std::vector<std::vector<Slots>> samples;
    for (int i = 0; i < 2; ++i) samples.push_back({random_slots(rng, slots, 0.5), random_slots(rng, slots, 0.5)});
    std::vector<std::vector<Slots>> one_outputs, three_outputs;
    const auto one = graph::simulate_magnitudes(program, samples, &one_outputs, 1);
    const auto three = graph::simulate_magnitudes(program, samples, &three_outputs, 3);
    CHECK(one == three);
    CHECK(one_outputs == three_outputs);
    // And both are the full simulation's, node by node (runs of slot-by-slot nodes are computed a block of
    // slots at a time there: the same doubles).
    const auto values = graph::simulate(program, samples.back());
    const auto last = graph::simulate_magnitudes(program, {samples.back()}, nullptr, 3);
    for (std::size_t id = 0; id < values.size(); ++id) {
      double m = 0;
      for (const auto& x : values[id]) m = std::max(m, std::abs(x));
      CHECK(three[id] >= m * (1 - 1e-15));
      CHECK(std::abs(last[id] - m) <= 1e-15 * m);
    }
    const auto outputs = graph::simulate_outputs(program, samples.back());
    REQUIRE(outputs.size() == program.outputs().size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      CHECK(outputs[k] == values[program.outputs()[k]]);
      CHECK(three_outputs.back()[k] == values[program.outputs()[k]]);
    }
  }
}

TEST_CASE("with calibration inputs, bootstraps avoid large values", "[graph][simulate]") {
  auto rng = cerium_test::make_rng(612);
  INFO("test seed " << cerium_test::test_seed());
  const auto context = toy_context(7);
  graph::Tracer t(context);
  t.output(swelling_chain(t, t.input("x", 8)), "y");
  const graph::Program program = std::move(t).finish();
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = 6, .output_scale = context->parameters().default_scale(), .min_input_level = 1, .slots = 8};
  std::vector<std::vector<Slots>> samples;
  for (int i = 0; i < 3; ++i) samples.push_back({random_slots(rng, 8, 0.5)});
  const auto magnitudes = graph::simulate_magnitudes(program, samples);

  options.calibration = samples;
  const graph::Plan plan = graph::plan(program, options);
  CHECK(plan.bootstraps() >= 1);
  CHECK(plan.bootstrap_magnitude <= 2);
  for (std::size_t id = 0; id < plan.nodes.size(); ++id) {
    if (plan.nodes[id].bootstrap) CHECK(magnitudes[id] <= 2);
  }
  // A limit nothing meets: raised until a placement exists, and the plan says how large its values got.
  options.bootstrap_magnitude_limit = 1e-9;
  const graph::Plan loose = graph::plan(program, options);
  CHECK(loose.bootstrap_magnitude > 1e-9);
  options.calibration = {};
  CHECK(graph::plan(program, options).bootstrap_magnitude == 0);  // not measured without calibration
}

TEST_CASE("values kept exact are never bootstrapped, and the planner refreshes before them", "[graph][simulate]") {
  // A softmax denominator in miniature: squares s_i (deep, so that they arrive low), their total over two slots
  // kept exact from the squares on, then a deep chain on the total. The planner must refresh the squares (or
  // earlier), never the total nor what lies between, and leave the rest of the program alone.
  const auto context = toy_context(7);
  graph::Tracer t(context);
  auto x = t.input("x", 8);
  for (int i = 0; i < 5; ++i) x = t.multiply(x, x);
  std::vector<graph::Value> squares{t.multiply(x, 0.5), t.multiply(x, 0.25)};
  const graph::Value unrelated = t.multiply(x, 3.0);  // traced between, not on a path from the squares
  const graph::Value sum = t.add(squares[0], squares[1]);
  const graph::Value turned = t.rotate(sum, 1);
  graph::Value total = t.add(t.add(sum, turned), 1.0);
  graph::keep_exact(t, total, std::span<const graph::Value>(squares));
  for (int i = 0; i < 3; ++i) total = t.multiply(total, total);
  t.output(t.add(total, unrelated), "y");
  const graph::Program program = std::move(t).finish();

  for (const graph::Value& v : squares) CHECK_FALSE(program.node(v.id()).keep_exact);
  CHECK_FALSE(program.node(unrelated.id()).keep_exact);
  CHECK(program.node(sum.id()).keep_exact);
  CHECK(program.node(turned.id()).keep_exact);
  std::size_t exact = 0;
  for (graph::NodeId id = 0; id < program.size(); ++id) exact += program.node(id).keep_exact ? 1 : 0;
  CHECK(exact == 4);  // the sum, its turn, their sum and the constant added

  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = 4, .output_scale = context->parameters().default_scale(),
                                           .min_input_level = 1, .slots = 8};
  const graph::Plan plan = graph::plan(program, options);
  CHECK(plan.bootstraps() >= 1);
  for (graph::NodeId id = 0; id < program.size(); ++id) {
    if (program.node(id).keep_exact) CHECK_FALSE(plan.nodes[id].bootstrap);
  }
  // The greedy rule alone (no search, no refresh pass) sees the exact stretch coming and refreshes before it.
  options.placement = {.search_limit = 0, .refresh_budget = 0};
  const graph::Plan greedy = graph::plan(program, options);
  for (graph::NodeId id = 0; id < program.size(); ++id) {
    if (program.node(id).keep_exact) CHECK_FALSE(greedy.nodes[id].bootstrap);
  }
}

TEST_CASE("runs of slot-by-slot nodes tiled give the node-by-node values: squares, sums, reused buffers",
          "[graph][simulate]") {
  auto rng = cerium_test::make_rng(617);
  INFO("test seed " << cerium_test::test_seed());
  const auto context = toy_context(8);
  const std::size_t slots = 1024;  // four blocks of slots
  // Values that live only inside a run (squared: an operand read twice by its last reader), sums of them, and
  // values read after a rotation ends the run.
  graph::Tracer t(context);
  std::vector<graph::Value> x = {t.input("a", slots), t.input("b", slots)};
  for (int i = 0; i < 6; ++i) {
    const auto square = t.multiply(x[0], x[0]);
    const auto cross = t.add(t.multiply(square, 0.5), t.multiply(x[1], 0.25));
    x[1] = t.add(t.multiply(cross, cross), x[0]);
    x[0] = i % 2 == 0 ? t.rotate(cross, 3) : t.sub(cross, square);
  }
  // A value squared by its last reader frees one block buffer, not two: the two values made next live together.
  const auto y = t.add(x[0], x[1]);
  const auto z = t.multiply(y, y);
  const auto u = t.multiply(z, 0.5);
  const auto w = t.add(z, 0.25);
  x[1] = t.add(x[1], t.sub(u, w));
  t.output(x[0], "a");
  t.output(x[1], "b");
  const graph::Program program = std::move(t).finish();
  const std::vector<Slots> inputs = {random_slots(rng, slots, 0.5), random_slots(rng, slots, 0.5)};
  const auto values = graph::simulate(program, inputs);
  const auto outputs = graph::simulate_outputs(program, inputs);
  for (std::size_t k = 0; k < outputs.size(); ++k) CHECK(outputs[k] == values[program.outputs()[k]]);
  for (const std::size_t threads : {1, 2}) {
    const auto magnitudes = graph::simulate_magnitudes(program, {inputs}, nullptr, threads);
    for (std::size_t id = 0; id < values.size(); ++id) {
      double m = 0;
      for (const auto& v : values[id]) m = std::max(m, std::abs(v));
      CHECK(std::abs(magnitudes[id] - m) <= 1e-15 * m);
    }
  }
}

TEST_CASE("sums of rotated values times plaintexts tiled give the node-by-node values", "[graph][simulate]") {
  auto rng = cerium_test::make_rng(619);
  INFO("test seed " << cerium_test::test_seed());
  const auto context = toy_context(4);
  const std::size_t slots = 1024;  // four blocks of 256 slots
  std::uniform_real_distribution<double> d(-1, 1);
  const auto plain = [&](std::size_t period) {
    std::vector<std::complex<double>> v(period);
    for (auto& x : v) x = {d(rng), d(rng)};
    return graph::PlainVector(v);
  };
  // A matrix product's terms (each read only by the add after it: computed with it), with rotations whose blocks
  // wrap around the vector's end (read through a copy) or not (read in place), the product first or second in its
  // add, periods of 1 to the whole vector; and a product read twice (not fused) and one read by a later node.
  graph::Tracer t(context);
  const graph::Value x = t.input("x", slots);
  graph::Value sum = t.multiply(x, plain(16));
  const std::int64_t steps[] = {1, 3, 255, 256, 300, 1023, -5};
  for (std::size_t k = 0; k < std::size(steps); ++k) {
    const graph::Value term = t.multiply(t.rotate(x, steps[k]), plain(std::size_t{1} << (k % 11)));
    sum = k % 2 == 0 ? t.add(sum, term) : t.add(term, sum);
  }
  const graph::Value twice = t.multiply(sum, plain(slots));
  const graph::Value later = t.multiply(t.rotate(x, 7), plain(4));
  sum = t.add(t.add(sum, twice), twice);
  sum = t.add(t.multiply(sum, 0.5), later);
  t.output(sum, "y");
  const graph::Program program = std::move(t).finish();
  const std::vector<Slots> inputs = {random_slots(rng, slots, 1.0)};
  const auto values = graph::simulate(program, inputs);
  CHECK(graph::simulate_outputs(program, inputs).front() == values[program.outputs().front()]);
  for (const std::size_t threads : {1, 2}) {
    std::vector<std::vector<Slots>> outputs;
    const auto magnitudes = graph::simulate_magnitudes(program, {inputs}, &outputs, threads);
    CHECK(outputs.front().front() == values[program.outputs().front()]);
    for (std::size_t id = 0; id < values.size(); ++id) {
      double m = 0;
      for (const auto& v : values[id]) m = std::max(m, std::abs(v));
      INFO("node " << id << " (" << program.describe(static_cast<graph::NodeId>(id)) << ")");
      CHECK(std::abs(magnitudes[id] - m) <= 1e-15 * m);
    }
  }
}
