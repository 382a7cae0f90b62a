// A program planned and run one stage at a time (graph::StagedPlanner): a 40-deep computation of two values in
// five stages at N = 2^12 with planned bootstraps. Each stage's inputs arrive at the levels the previous stage's
// outputs hold, the calibration samples it carries forward equal the double-precision values, the rotation keys
// of the first stage serve the rest (another step is a trace-time error), and the staged run decrypts to the
// double-precision result.

#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/staged_planner.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

constexpr int kStages = 5, kSteps = 4;  // 8 levels of products per stage

// (a, b) <- (a^2 / 2 + 1/4, a b / 2 + R(b) / 4), kSteps times: bounded by 1 for inputs in [-1, 1].
template <class Ops>
std::vector<typename Ops::Value> stage(Ops& ops, std::span<const typename Ops::Value> in, std::int64_t step = 1) {
  auto a = in[0], b = in[1];
  for (int i = 0; i < kSteps; ++i) {
    auto next_b = ops.add(ops.multiply(ops.multiply(a, b), 0.5), ops.multiply(ops.rotate(b, step), 0.25));
    a = ops.add(ops.multiply(ops.multiply(a, a), 0.5), 0.25);
    b = next_b;
  }
  return {a, b};
}

void reference_stage(Values& a, Values& b) {
  for (int i = 0; i < kSteps; ++i) {
    Values next_b(b.size());
    for (std::size_t j = 0; j < b.size(); ++j) next_b[j] = a[j] * b[j] * 0.5 + b[(j + 1) % b.size()] * 0.25;
    for (auto& v : a) v = v * v * 0.5 + 0.25;
    b = next_b;
  }
}

}  // namespace

TEST_CASE("a program planned and run stage by stage keeps its levels, calibration and precision",
          "[graph][bootstrap][staged][heavy]") {
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::Bootstrapper bootstrapper(f.context);
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  auto rng = cerium_test::make_rng(95);
  INFO("test seed " << cerium_test::test_seed());
  const std::size_t slots = f.max_slots();
  Values a = random_real(rng, slots), b = random_real(rng, slots);
  graph::SlotValues sa(a.begin(), a.end()), sb(b.begin(), b.end());

  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  graph::StagedPlanner planner(f.context, options, {{.slots = slots}, {.slots = slots}}, {{sa, sb}});
  std::vector<Ciphertext> values;
  int bootstraps = 0;
  for (int s = 0; s < kStages; ++s) {
    const std::vector<graph::StageInput> inputs = planner.inputs();
    const graph::Plan plan = planner.next(
        [](graph::Tracer& t, std::span<const graph::Value> x) { return stage<graph::Tracer>(t, x); });
    bootstraps += plan.bootstraps();
    for (std::size_t i = 0; i < 2; ++i) {  // the inputs arrive where the last stage left them
      const int want = inputs[i].level < 0 ? f.context->max_level() : inputs[i].level;
      CHECK(plan.input_encoding(i).level == want);
    }
    if (s == 0) {
      CHECK(plan.keys.steps == std::vector<std::int64_t>{1});
      f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
      options.available_rotations = plan.keys.steps;
      values.push_back(f.encryptor.encrypt(f.encoder.encode(a, plan.input_encoding(0))));
      values.push_back(f.encryptor.encrypt(f.encoder.encode(b, plan.input_encoding(1))));
    }
    values = graph::Executor<backend::CpuBackend>(plan, f.evaluator, &bootstrapper).run(std::move(values));
    reference_stage(a, b);
    // The samples carried forward are this stage's exact outputs.
    REQUIRE(planner.samples().size() == 1);
    double sample_error = 0;
    for (std::size_t j = 0; j < slots; ++j) {
      sample_error = std::max({sample_error, std::abs(planner.samples()[0][0][j] - a[j]),
                               std::abs(planner.samples()[0][1][j] - b[j])});
    }
    CHECK(sample_error < 1e-12);
  }
  CHECK(planner.stages() == kStages);
  // 40 levels in 24: at least 3 bootstraps of each value's chain.
  CHECK(bootstraps >= 3);
  const double bits_a = precision_bits(f.decrypt(values.at(0)), a), bits_b = precision_bits(f.decrypt(values.at(1)), b);
  WARN(bootstraps << " bootstraps over " << kStages << " stages; precision " << bits_a << " and " << bits_b
                  << " bits");
  CHECK(bits_a >= 12);
  CHECK(bits_b >= 12);

  // A later stage that needs a key the first did not: an error when it is traced and planned.
  graph::PlanOptions limited = options;
  limited.available_rotations = std::vector<std::int64_t>{1};
  graph::StagedPlanner strict(f.context, limited, {{.slots = slots}, {.slots = slots}});
  strict.next([](graph::Tracer& t, std::span<const graph::Value> x) { return stage<graph::Tracer>(t, x); });
  CHECK_THROWS_AS(strict.next([](graph::Tracer& t, std::span<const graph::Value> x) {
                    return stage<graph::Tracer>(t, x, 2);
                  }),
                  MissingKeyError);
  CHECK_THROWS_AS(graph::StagedPlanner(f.context, options, {}), InvalidArgument);
  CHECK_THROWS_AS(graph::StagedPlanner(f.context, options, {{.slots = slots}}, {{sa, sb}}), MismatchError);
}

TEST_CASE("simulate_outputs equals the outputs of a full simulation", "[graph][simulate]") {
  Fixture f(toy(11, 4, 2, 3));
  auto rng = cerium_test::make_rng(96);
  graph::Tracer t(f.context);
  const graph::Value x = t.input("x"), y = t.input("y");
  t.output(t.add(t.multiply(x, y), t.rotate(x, 3)), "first");
  t.output(t.multiply(t.rotate(y, -1), 0.5), "second");
  const graph::Program program = std::move(t).finish();
  const Values vx = random_real(rng, f.max_slots()), vy = random_real(rng, f.max_slots());
  const std::vector<graph::SlotValues> inputs = {{vx.begin(), vx.end()}, {vy.begin(), vy.end()}};
  const auto all = graph::simulate(program, inputs);
  const auto outputs = graph::simulate_outputs(program, inputs);
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0] == all[program.outputs()[0]]);
  CHECK(outputs[1] == all[program.outputs()[1]]);
}
