// Randomized misuse of the graph API: the tracer (bad slots and levels, values of another tracer or never traced,
// non-finite constants, a spent tracer), the planner (programs deeper than the levels, impossible bootstrap
// levels, missing rotation keys) and the executor (wrong input counts, levels, slots, contexts). Every call must
// succeed or throw the cerium::Error subclass of its kind, never a standard-library exception.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cerium/graph/executor.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/tracer.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
using cerium_test::require_error;
using cerium_test::pick;
using cerium_test::succeed_or_error;

namespace {

std::string text(std::int64_t v) { return std::to_string(v); }

// N = 2^10, 3 levels; keys for step 1 only.
Fixture& fixture() {
  static Fixture f(toy(10, 3, 1, 1), {.relinearization = true, .rotations = {1}});
  return f;
}

// x^(2^depth) on one input of `slots` slots.
graph::Program squares(const ContextPtr& context, int depth, std::size_t slots) {
  graph::Tracer t(context);
  auto x = t.input("x", slots);
  for (int i = 0; i < depth; ++i) x = x * x;
  t.output(x, "y");
  return std::move(t).finish();
}

}  // namespace

TEST_CASE("tracer misuse throws typed errors", "[graph][misuse]") {
  auto rng = cerium_test::make_rng(9101);
  INFO("seed " << cerium_test::test_seed());
  const ContextPtr context = fixture().context;
  const int max_level = context->max_level();
  const std::size_t max_slots = context->parameters().max_slots();
  for (int trial = 0; trial < 60; ++trial) {
    graph::Tracer t(context), other(context);
    const auto x = t.input("x", 8);
    const auto z = other.input("z", 8);
    const std::size_t slots = pick<std::size_t>(rng, {3, 6, 12, max_slots * 2, max_slots + 1,
                                                      std::numeric_limits<std::size_t>::max(), 3 + 2 * (rng() % 100)});
    require_error<InvalidArgument>("input(slots " + std::to_string(slots) + ")", [&] { (void)t.input("w", slots); },
                                   std::to_string(slots));
    const int level = pick<int>(rng, {max_level + 1, -2, std::numeric_limits<int>::min(),
                                      std::numeric_limits<int>::max(), max_level + 1 + static_cast<int>(rng() % 99)});
    require_error<LevelError>("input(level " + text(level) + ")", [&] { (void)t.input("w", 8, level); }, text(level));
    require_error<MismatchError>("add(another tracer's value)", [&] { (void)t.add(x, z); }, "another tracer");
    require_error<MismatchError>("operator*(another tracer's value)", [&] { (void)(x * z); });
    require_error<MismatchError>("operator+(a value never traced)", [&] { (void)(graph::Value{} + x); },
                                 "never traced");
    require_error<MismatchError>("rotate(a value never traced)", [&] { (void)graph::rotate(graph::Value{}, 1); });
    require_error<MismatchError>("add(8 and 16 slots)", [&] { (void)t.add(x, t.input("y", 16)); }, "slots");
    const std::int64_t steps = pick<std::int64_t>(rng, {std::numeric_limits<std::int64_t>::min(),
                                                        std::numeric_limits<std::int64_t>::max(),
                                                        static_cast<std::int64_t>(rng()), -1, 0});
    succeed_or_error<InvalidArgument>("rotate(" + text(steps) + ")", [&] { (void)t.rotate(x, steps); });
    const double c = pick<double>(rng, {std::nan(""), std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity()});
    require_error<InvalidArgument>("multiply(constant " + std::to_string(c) + ")", [&] { (void)t.multiply(x, c); });
    require_error<InvalidArgument>("add(constant " + std::to_string(c) + ")", [&] { (void)t.add(x, c); });
    const std::size_t period = pick<std::size_t>(rng, {3, 5, 16, 7});
    require_error<InvalidArgument>("multiply(a plaintext of period " + std::to_string(period) + ")",
                                   [&] { (void)t.multiply(x, graph::PlainVector(std::vector<double>(period, 1.0))); });
    require_error<InvalidArgument>("multiply(an empty plaintext vector)",
                                   [&] { (void)t.multiply(x, graph::PlainVector{}); });
    require_error<InvalidArgument>("PlainVector({})", [&] { (void)graph::PlainVector(std::vector<double>{}); });
    // Outputs missing, then a spent tracer.
    graph::Tracer empty(context);
    (void)empty.input("x", 8);
    require_error<InvalidArgument>("finish() without outputs", [&] { (void)std::move(empty).finish(); }, "output");
    t.output(x, "y");
    (void)std::move(t).finish();
    require_error<InvalidArgument>("input() after finish()", [&] { (void)t.input("late", 8); }, "spent");
    require_error<InvalidArgument>("add() after finish()", [&] { (void)t.add(x, x); });
  }
}

TEST_CASE("planner and executor misuse throws typed errors", "[graph][misuse]") {
  auto rng = cerium_test::make_rng(9102);
  INFO("seed " << cerium_test::test_seed());
  Fixture& f = fixture();
  const ContextPtr context = f.context;
  const int max_level = context->max_level();
  Fixture g(toy(11, 2, 1, 1), {.relinearization = true});
  for (int trial = 0; trial < 30; ++trial) {
    // Deeper than the levels, with no bootstrapper: LevelError naming the node.
    const int depth = max_level + 1 + static_cast<int>(rng() % 4);
    require_error<LevelError>("plan(depth " + text(depth) + ")", [&] { (void)graph::plan(squares(context, depth, 8)); },
                              "PlanOptions::bootstrap");
    // A bootstrapper that delivers an impossible level.
    graph::PlanOptions options;
    const int delivered = pick<int>(rng, {0, -1, max_level + 1, std::numeric_limits<int>::max()});
    options.bootstrap = graph::BootstrapSpec{.output_level = delivered, .output_scale = 1e10, .slots = 8};
    require_error<LevelError>("plan(bootstrap output level " + text(delivered) + ")",
                              [&] { (void)graph::plan(squares(context, depth, 8), options); }, text(delivered));
    // An output level beyond the parameters.
    graph::PlanOptions high;
    high.output_level = pick<int>(rng, {max_level + 1, -1, std::numeric_limits<int>::max(),
                                        std::numeric_limits<int>::min()});
    require_error<LevelError>("plan(output level " + text(high.output_level) + ")",
                              [&] { (void)graph::plan(squares(context, 1, 8), high); }, text(high.output_level));
    // Rotations without keys.
    graph::Tracer r(context);
    const auto v = r.input("v", 8);
    const std::int64_t steps = 2 + static_cast<std::int64_t>(rng() % 6);
    r.output(r.rotate(v, steps), "w");
    graph::PlanOptions limited;
    limited.available_rotations = std::vector<std::int64_t>{1};
    require_error<MissingKeyError>("plan(rotate by " + text(steps) + ", keys for 1)",
                                   [&] { (void)graph::plan(std::move(r).finish(), limited); });

    // The executor: wrong input count, level, slots, and another context's evaluator.
    const graph::Plan plan = graph::plan(squares(context, 1, 8));
    const graph::Executor<backend::CpuBackend> executor(plan, f.evaluator);
    const EncodeOptions good = plan.input_encoding(0);
    const Values x = random_real(rng, 8);
    std::vector<Ciphertext> none;
    require_error<InvalidArgument>("run(0 inputs)", [&] { (void)executor.run(std::move(none)); }, "inputs");
    std::vector<Ciphertext> twice;
    twice.push_back(f.encryptor.encrypt(f.encoder.encode(x, good)));
    twice.push_back(f.encryptor.encrypt(f.encoder.encode(x, good)));
    require_error<InvalidArgument>("run(2 inputs)", [&] { (void)executor.run(std::move(twice)); }, "inputs");
    const int wrong_level = good.level == 0 ? 1 : good.level - 1;
    std::vector<Ciphertext> low;
    low.push_back(f.encryptor.encrypt(f.encoder.encode(x, {.level = wrong_level, .slots = 8})));
    require_error<LevelError>("run(an input at level " + text(wrong_level) + ")",
                              [&] { (void)executor.run(std::move(low)); }, text(wrong_level));
    std::vector<Ciphertext> wide;
    wide.push_back(f.encryptor.encrypt(f.encoder.encode(x, {.level = good.level, .scale = good.scale, .slots = 16})));
    require_error<MismatchError>("run(an input of 16 slots)", [&] { (void)executor.run(std::move(wide)); }, "slots");
    std::vector<Ciphertext> foreign;
    foreign.push_back(g.encrypt(x, std::min(good.level, g.context->max_level()), 8));
    require_error<MismatchError>("run(another context's input)", [&] { (void)executor.run(std::move(foreign)); });
    require_error<MismatchError>("Executor(another context's evaluator)",
                                 [&] { (void)graph::Executor<backend::CpuBackend>(plan, g.evaluator); });
    require_error<InvalidArgument>("input_encoding(7)", [&] { (void)plan.input_encoding(7); });
  }
}
