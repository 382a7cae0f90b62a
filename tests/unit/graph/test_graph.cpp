// Programs as graphs on the CPU: random programs traced, planned and run give the words of the same code run
// eagerly, decrypt to the plaintext reference, need exactly the rotation keys the plan infers; the tracer and the
// planner reject bad programs with typed errors naming the node; explain() and to_dot() describe the plan.

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "cerium/ckks/decryptor.hpp"
#include "cerium/ckks/encoder.hpp"
#include "cerium/ckks/encryptor.hpp"
#include "cerium/ckks/evaluator.hpp"
#include "cerium/ckks/key_generator.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "graph_test_support.hpp"
#include "support/catch.hpp"
#include "support/random.hpp"

using namespace cerium;
using namespace cerium::ckks;
using namespace graph_test;

namespace {

CkksConfig toy_config(int levels) {
  return CkksConfig{.log_n = 11, .levels = levels, .level_width = 2, .level_prime_bits = 28, .dnum = 2,
                    .insecure_opt_out = true};
}

math::Seed seed_of(std::uint32_t tag) {
  math::Seed seed{};
  for (std::uint32_t i = 0; i < 8; ++i) seed.words[i] = tag * 0x9e3779b9u + i;
  return seed;
}

Slots random_slots(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> d(-0.5, 0.5);
  Slots v(n);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

std::vector<Ciphertext> two(Ciphertext a, Ciphertext b) {
  std::vector<Ciphertext> out;
  out.push_back(std::move(a));
  out.push_back(std::move(b));
  return out;
}

bool same_words(const Ciphertext& a, const Ciphertext& b) {
  if (a.size() != b.size() || a.level() != b.level() || a.scale() != b.scale()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a.part(i) == b.part(i))) return false;
  }
  return true;
}

double error_bits(const std::vector<Complex>& got, const Slots& want) {
  double worst = 0, size = 1;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    size = std::max(size, std::abs(want[i]));
  }
  return worst == 0 ? 60 : -std::log2(worst / size);
}

}  // namespace

TEST_CASE("traced, planned programs equal eager runs word for word and the plaintext reference", "[graph]") {
  const auto context = Context::create(toy_config(6));
  const KeyGenerator keygen(context, seed_of(1));
  const Encoder encoder(context);
  const Encryptor encryptor(keygen.public_key());
  const Decryptor decryptor(keygen.secret_key());
  auto rng = cerium_test::make_rng(41);
  INFO("test seed " << cerium_test::test_seed());

  for (int trial = 0; trial < 12; ++trial) {
    const ProgramShape shape{.seed = rng(), .operations = 14, .depth = 5, .slots = 8};
    INFO("trial " << trial << ", program seed " << shape.seed);

    graph::Tracer tracer(context);
    const auto traced_uses = random_program(
        tracer, {tracer.input("x", shape.slots), tracer.input("y", shape.slots, context->max_level() - 1)}, shape);
    graph::PlanOptions separate;
    separate.hoist_rotations = false;  // hoisted rotations are other (equally valid) words than Eager's
    graph::Program program = std::move(tracer).finish();
    graph::Plan plan = graph::plan(program, separate);
    CHECK(plan.bootstraps() == 0);

    // Exactly the keys the program uses.
    CHECK(std::vector<std::int64_t>(traced_uses.first.begin(), traced_uses.first.end()) == plan.keys.steps);
    CHECK(plan.keys.conjugation == traced_uses.second);

    Evaluator evaluator(context);
    evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
    evaluator.set_galois_keys(
        std::make_shared<const GaloisKeys>(keygen.galois_keys(plan.keys.steps, plan.keys.conjugation)));
    REQUIRE(evaluator.galois_keys()->size() == plan.keys.galois_elements.size());

    const Slots x = random_slots(rng, shape.slots), y = random_slots(rng, shape.slots);
    std::vector<Ciphertext> inputs;
    inputs.push_back(encryptor.encrypt(encoder.encode(x, plan.input_encoding(0))));
    inputs.push_back(encryptor.encrypt(encoder.encode(y, plan.input_encoding(1))));

    graph::Executor<backend::CpuBackend> executor(plan, evaluator);
    std::size_t progress_calls = 0;
    const auto planned = executor.run(two(inputs[0].clone(), inputs[1].clone()),
                                      [&](const graph::RunProgress& p) { progress_calls = p.nodes_done; });
    CHECK(progress_calls == plan.program.size());

    graph::Eager<backend::CpuBackend> eager(evaluator);
    random_program(eager, two(eager.input(inputs[0]), eager.input(inputs[1])), shape);
    ReferenceOps reference;
    random_program(reference, {x, y}, shape);

    // Plaintexts cached after their first use: the same words, twice.
    const graph::Executor<backend::CpuBackend> caching(plan, evaluator, nullptr, {.cache_plaintexts = true});
    for (int repeat = 0; repeat < 2; ++repeat) {
      const auto again = caching.run(two(inputs[0].clone(), inputs[1].clone()));
      for (std::size_t o = 0; o < planned.size(); ++o) CHECK(same_words(again[o], planned[o]));
    }
    // Walked in segments of 5 nodes (start, advance, finish: how a captured run records them): the same words; an
    // unfinished walk is refused; the cached executor then holds every plaintext on its "device".
    {
      auto walk = caching.start(two(inputs[0].clone(), inputs[1].clone()));
      CHECK_THROWS_AS(caching.finish(std::move(walk)), InvalidArgument);
    }
    auto walk = caching.start(two(inputs[0].clone(), inputs[1].clone()));
    for (graph::NodeId end = 5; walk.next_node() < plan.program.size(); end += 5) {
      caching.advance(walk, end);
      CHECK(walk.next_node() == std::min<std::size_t>(end, plan.program.size()));
    }
    const auto walked = caching.finish(std::move(walk));
    for (std::size_t o = 0; o < planned.size(); ++o) CHECK(same_words(walked[o], planned[o]));
    CHECK(caching.host_encoded_plaintexts() == 0);
    // Uncached, encoded at each use on the run's thread and streamed from three threads: the same words.
    for (const unsigned threads : {1u, 3u}) {
      const auto streamed = graph::Executor<backend::CpuBackend>(plan, evaluator, nullptr, {.encode_threads = threads})
                                .run(two(inputs[0].clone(), inputs[1].clone()));
      for (std::size_t o = 0; o < planned.size(); ++o) CHECK(same_words(streamed[o], planned[o]));
    }
    // Encoded ahead on three threads at the plan's levels: the same words, and no plaintext encoded again.
    const graph::Executor<backend::CpuBackend> ahead(plan, evaluator, nullptr, {.cache_plaintexts = true});
    std::size_t plain_nodes = 0;
    for (graph::NodeId id = 0; id < plan.program.size(); ++id) {
      const graph::Op op = plan.program.node(id).op;
      plain_nodes += op == graph::Op::multiply_plain || op == graph::Op::add_plain;
    }
    CHECK(ahead.host_encoded_plaintexts() == plain_nodes);  // nothing cached yet
    CHECK(ahead.encode_plaintexts(3) == plain_nodes);
    CHECK(ahead.host_encoded_plaintexts() == 0);
    CHECK(ahead.encode_plaintexts() == 0);
    const auto encoded_ahead = ahead.run(two(inputs[0].clone(), inputs[1].clone()));
    for (std::size_t o = 0; o < planned.size(); ++o) CHECK(same_words(encoded_ahead[o], planned[o]));
    CHECK(ahead.plaintexts_encoded() == plain_nodes);

    // With hoisting (the default) the rotations of one value share a ModUp: the same values within the noise.
    const graph::Plan hoisting = graph::plan(program);
    const auto hoisted = graph::Executor<backend::CpuBackend>(hoisting, evaluator).run(two(inputs[0].clone(), inputs[1].clone()));
    REQUIRE(planned.size() == 2);
    for (std::size_t o = 0; o < planned.size(); ++o) {
      const auto a = encoder.decode(decryptor.decrypt(hoisted[o]));
      CHECK(error_bits(a, reference.outputs[o]) >= 12);
    }
    for (std::size_t o = 0; o < planned.size(); ++o) {
      INFO("output " << o);
      CHECK(same_words(planned[o], eager.outputs()[o]));
      const graph::NodeId out = plan.program.outputs()[o];
      CHECK(planned[o].level() == plan.nodes[plan.program.node(out).inputs[0]].held_level);
      const auto decoded = encoder.decode(decryptor.decrypt(planned[o]));
      CHECK(error_bits(decoded, reference.outputs[o]) >= 12);
    }
  }
}

TEST_CASE("a product sum relinearizes once and equals its products added", "[graph]") {
  const auto context = Context::create(toy_config(4));
  const KeyGenerator keygen(context, seed_of(7));
  const Encoder encoder(context);
  const Encryptor encryptor(keygen.public_key());
  const Decryptor decryptor(keygen.secret_key());
  auto rng = cerium_test::make_rng(43);
  constexpr std::size_t slots = 8;
  // x y + R(x) R(x) + (x y) x: a square, a rotation and a factor one level lower (brought down to it).
  graph::Tracer t(context);
  const auto x = t.input("x", slots), y = t.input("y", slots);
  const auto r = t.rotate(x, 1), xy = t.multiply(x, y);
  const std::vector<graph::Value> left{x, r, xy}, right{y, r, x};
  const auto sum = t.product_sum(left, right);
  t.output(sum, "sum");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  CHECK(plan.program.node(sum.id()).op == graph::Op::product_sum);
  CHECK(plan.key_switches() == 3);  // the rotation, x y's relinearization and the sum's one
  CHECK(plan.nodes[sum.id()].level == context->max_level() - 2);
  CHECK(graph::explain(plan).find("3 products, one relinearization") != std::string::npos);

  Evaluator evaluator(context);
  evaluator.set_relinearization_key(std::make_shared<const RelinearizationKey>(keygen.relinearization_key()));
  evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(keygen.galois_keys(plan.keys.steps)));
  const Slots xv = random_slots(rng, slots), yv = random_slots(rng, slots);
  std::vector<Ciphertext> inputs;
  inputs.push_back(encryptor.encrypt(encoder.encode(xv, plan.input_encoding(0))));
  inputs.push_back(encryptor.encrypt(encoder.encode(yv, plan.input_encoding(1))));
  const auto planned = graph::Executor<backend::CpuBackend>(plan, evaluator).run(two(inputs[0].clone(), inputs[1].clone()));
  Slots want(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    want[i] = xv[i] * yv[i] + xv[(i + 1) % slots] * xv[(i + 1) % slots] + xv[i] * yv[i] * xv[i];
  }
  const double bits = error_bits(encoder.decode(decryptor.decrypt(planned[0])), want);
  INFO("product sum precision " << bits << " bits");
  CHECK(bits > 14);
  // The simulated node values (what the planner calibrates on): the products added.
  const auto simulated = graph::simulate(plan.program, {xv, yv});
  for (std::size_t i = 0; i < slots; ++i) CHECK(std::abs(simulated[sum.id()][i] - want[i]) < 1e-12);
}

TEST_CASE("the tracer rejects bad operands at trace time, naming the node", "[graph]") {
  const auto context = Context::create(toy_config(4));
  graph::Tracer t(context), other(context);
  const auto x = t.input("x", 8);
  const auto y = t.input("y", 16);
  const auto z = other.input("z", 8);
  CHECK_THROWS_AS(t.add(x, y), MismatchError);       // 8 and 16 slots
  CHECK_THROWS_AS(t.multiply(x, z), MismatchError);  // another tracer's value
  CHECK_THROWS_AS(t.multiply(x, graph::PlainVector(std::vector<double>(3, 1.0))), InvalidArgument);  // period 3
  CHECK_THROWS_AS(t.multiply(x, std::nan("")), InvalidArgument);
  CHECK_THROWS_AS(t.input("w", 12), InvalidArgument);
  CHECK_THROWS_AS(t.input("w", 8, 9), LevelError);
  try {
    t.add(x, y);
  } catch (const MismatchError& e) {
    CHECK(std::string(e.what()).find("node 1 (input 'y')") != std::string::npos);
  }
  CHECK(t.rotate(x, 8).id() == x.id());  // a full turn: no node, no key
  // Product sums: as many factors on each side (at least one), of one slot count, of this tracer.
  const std::vector<graph::Value> xs{x, x}, one{x}, none, mixed{x, y}, foreign{x, z};
  CHECK_THROWS_AS(t.product_sum(xs, one), MismatchError);
  CHECK_THROWS_AS(t.product_sum(none, none), MismatchError);
  CHECK_THROWS_AS(t.product_sum(xs, mixed), MismatchError);
  CHECK_THROWS_AS(t.product_sum(xs, foreign), MismatchError);
  graph::Tracer empty(context);
  empty.input("x");
  CHECK_THROWS_AS(std::move(empty).finish(), InvalidArgument);
}

TEST_CASE("the planner rejects programs it cannot run, naming the node", "[graph]") {
  const auto context = Context::create(toy_config(3));
  graph::Tracer t(context);
  auto x = t.input("x", 8);
  for (int i = 0; i < 4; ++i) x = x * x;  // 4 products on 3 levels
  t.label(x, "fourth square");
  t.output(x, "y");
  graph::Program program = std::move(t).finish();
  try {
    graph::plan(program);
    FAIL("a program deeper than the parameters was planned");
  } catch (const LevelError& e) {
    const std::string message = e.what();
    CHECK(message.find("node 4 (multiply 'fourth square')") != std::string::npos);
    CHECK(message.find("PlanOptions::bootstrap") != std::string::npos);
  }

  graph::Tracer r(context);
  const auto v = r.input("v", 8);
  r.output(r.rotate(v, 3) + r.rotate(v, 1), "w");
  graph::Program rotations = std::move(r).finish();
  graph::PlanOptions limited;
  limited.available_rotations = std::vector<std::int64_t>{1, 2};
  CHECK_THROWS_AS(graph::plan(rotations, limited), MissingKeyError);
  limited.available_rotations = std::vector<std::int64_t>{1, 3, 4};
  const graph::Plan ok = graph::plan(rotations, limited);
  CHECK(ok.keys.steps == std::vector<std::int64_t>{1, 3});

  graph::Tracer b(context);
  b.output(b.bootstrap(b.input("x", 8)), "y");
  CHECK_THROWS_AS(graph::plan(std::move(b).finish()), LevelError);  // pinned, with no bootstrapper
}

TEST_CASE("the plan's memory figures, explain() and Graphviz", "[graph]") {
  const auto context = Context::create(toy_config(4));
  graph::Tracer t(context);
  const auto x = t.input("x", 8);
  const auto y = t.input("y", 8);
  const auto p = x * y;                 // level 3
  const auto q = t.rotate(p, 1) + p;    // p read twice, dies at the add
  t.output(q * 0.5, "out");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  const std::size_t n = context->ring_degree();
  const auto bytes_at = [&](int level) { return 2 * context->limbs_at(level) * n * 4; };
  CHECK(plan.memory.value_bytes[0] == bytes_at(4));
  CHECK(plan.memory.value_bytes[2] == bytes_at(3));
  CHECK(plan.memory.last_use[2] == 4);  // p: read by the rotation (3) and the add (4)
  CHECK(plan.memory.last_use[0] == 2);
  // The peak is at the product: x and y are freed only once p exists.
  CHECK(plan.memory.peak_bytes == 2 * bytes_at(4) + bytes_at(3));
  CHECK(plan.memory.peak_node == 2);
  CHECK(plan.nodes[5].level == 2);
  CHECK(plan.nodes[5].scale == plan.chain.at(2));

  CHECK(plan.plaintext_bytes == 0);

  graph::Tracer h(context);
  const auto v = h.input("v", 8);
  const graph::PlainVector w(std::vector<double>{0.5, -0.25});  // period 2: stored as 2 values
  h.output(h.rotate(v, 1) * w + h.rotate(v, 2) * w + h.rotate(v, 3), "sum");
  const graph::Plan hoisted = graph::plan(std::move(h).finish());
  REQUIRE(hoisted.hoisting.groups.size() == 1);
  auto steps = hoisted.hoisting.groups[0].steps;  // in trace order, which operator+ leaves to the compiler
  std::sort(steps.begin(), steps.end());
  CHECK(steps == std::vector<std::int64_t>{1, 2, 3});
  CHECK(hoisted.plaintext_bytes == 2 * sizeof(std::complex<double>));
  CHECK(hoisted.plaintext_encoded_bytes == context->limbs_at(4) * n * 4);  // w is read twice at one level: once

  // A device budget: enough, too small for the peak with the keys, too small for one product.
  graph::Tracer m(context);
  const auto a = m.input("a", 8);
  m.output(a * a, "square");
  const graph::Program small = std::move(m).finish();
  graph::PlanOptions budget;
  const std::size_t key = graph::switching_key_bytes(*context, KeyStorage::expanded);
  budget.memory_budget_bytes = key + 3 * bytes_at(4);
  CHECK_NOTHROW(graph::plan(small, budget));
  budget.memory_budget_bytes = key + bytes_at(4);
  CHECK_THROWS_AS(graph::plan(small, budget), OutOfMemoryError);
  try {
    budget.memory_budget_bytes = key;
    graph::plan(small, budget);
  } catch (const OutOfMemoryError& e) {
    CHECK(std::string(e.what()).find("node 1 (multiply)") != std::string::npos);
  }

  const std::string table = graph::explain(plan);
  CHECK(table.find("multiply") != std::string::npos);
  CHECK(table.find("rotation keys: 1 (steps 1)") != std::string::npos);
  CHECK(table.find("peak live ciphertexts") != std::string::npos);
  const std::string dot = graph::to_dot(plan);
  CHECK(dot.find("digraph plan") != std::string::npos);
  CHECK(dot.find("n2 -> n3") != std::string::npos);
}
