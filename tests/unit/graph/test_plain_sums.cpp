// Sums of plaintext products (graph/passes/plain_sums.hpp): the pass finds a matrix product's inner sums and
// leaves alone what it must (a product read twice, a sum that also adds other values, products at different
// levels), and the executor computing each sum in one evaluator call gives the words of the node-by-node run,
// with cached and with streamed plaintexts, or (RunOptions::round_sums_once) the words of each sum rounded once,
// however it is split; the evaluator's calls give the term-by-term words, or the unrescaled sum's.

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/passes/plain_sums.hpp"
#include "cerium/graph/simulate.hpp"
#include "cerium/graph/tracer.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;

namespace {

constexpr std::size_t kSlots = 16;

graph::PlainVector random_plain(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> v(kSlots);
  for (auto& x : v) x = d(rng);
  return graph::PlainVector(v);
}

circuits::DiagonalMatrix random_matrix(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<std::vector<double>> rows(kSlots, std::vector<double>(kSlots));
  for (auto& row : rows) {
    for (auto& v : row) v = d(rng);
  }
  return circuits::DiagonalMatrix::from_dense(rows);
}

std::vector<graph::NodeId> of_op(const graph::Program& program, graph::Op op) {
  std::vector<graph::NodeId> ids;
  for (graph::NodeId id = 0; id < program.size(); ++id) {
    if (program.node(id).op == op) ids.push_back(id);
  }
  return ids;
}

}  // namespace

TEST_CASE("plain sums: a matrix product's inner sums are found whole", "[graph][plain_sums]") {
  auto rng = cerium_test::make_rng();
  const auto context = Context::create(toy(12, 4, 2, 2));
  const auto m = random_matrix(rng);
  graph::Tracer t(context);
  t.output(graph::multiply(t, t.input("x", kSlots), m), "Mx");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  const graph::PlainSums found = graph::find_plain_sums(plan.program, plan.nodes);
  const auto bsgs = circuits::plan_bsgs(m);
  std::size_t inner_sums = 0;  // giants with two or more babies
  for (const auto& [giant, babies] : bsgs.giants) inner_sums += babies.size() >= 2 ? 1 : 0;
  CHECK(found.sums.size() == inner_sums);
  std::size_t products = 0;
  for (std::size_t k = 0; k < found.sums.size(); ++k) {
    const graph::PlainSum& sum = found.sums[k];
    CHECK(sum.products.size() >= 2);
    CHECK(plan.program.node(sum.root).op == graph::Op::add);
    CHECK(sum.members.back() == sum.root);
    CHECK(sum.members.size() == 2 * sum.products.size() - 1);  // a binary tree of additions
    for (const graph::NodeId member : sum.members) CHECK(found.sum_of[member] == static_cast<int>(k));
    products += sum.products.size();
  }
  std::size_t singles = 0;  // products of giants with one baby stay alone
  for (const auto& [giant, babies] : bsgs.giants) singles += babies.size() == 1 ? 1 : 0;
  CHECK(products + singles == of_op(plan.program, graph::Op::multiply_plain).size());
}

TEST_CASE("plain sums: shared products, mixed sums and levels stay apart", "[graph][plain_sums]") {
  auto rng = cerium_test::make_rng();
  const auto context = Context::create(toy(12, 4, 2, 2));
  graph::Tracer t(context);
  const auto x = t.input("x", kSlots);
  const auto y = t.multiply(x, x);  // one level below x
  // (1) two products of one level: a sum rooted at the addition.
  const auto s1 = t.add(t.multiply(x, random_plain(rng)), t.multiply(x, random_plain(rng)));
  t.output(s1, "s1");
  // (2) a product read twice (by the addition and an output) keeps its own value: no sum.
  const auto shared = t.multiply(x, random_plain(rng));
  t.output(t.add(shared, t.multiply(x, random_plain(rng))), "s2");
  t.output(shared, "shared");
  // (3) a sum of two products plus a rotation: the products' addition is the root, the rotation's is not a member.
  const auto inner = t.add(t.multiply(x, random_plain(rng)), t.multiply(x, random_plain(rng)));
  const auto mixed = t.add(inner, t.rotate(x, 1));
  t.output(mixed, "s3");
  // (4) products of operands at two levels: no sum.
  t.output(t.add(t.multiply(x, random_plain(rng)), t.multiply(y, random_plain(rng))), "s4");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  const graph::PlainSums found = graph::find_plain_sums(plan.program, plan.nodes);
  REQUIRE(found.sums.size() == 2);
  CHECK(found.sums[0].root == s1.id());
  CHECK(found.sums[1].root == inner.id());
  CHECK(found.sum_of[shared.id()] == -1);
  CHECK(found.sum_of[mixed.id()] == -1);
}

TEST_CASE("plain sums: fused runs give the node-by-node words", "[graph][plain_sums]") {
  auto rng = cerium_test::make_rng();
  Fixture f(toy(12, 4, 2, 2), KeyRequest{.relinearization = true});
  // Two matrix products and an activation between them, so sums sit at two levels, and a residual addition.
  const auto m1 = random_matrix(rng), m2 = random_matrix(rng);
  graph::Tracer t(f.context);
  const auto x = t.input("x", kSlots);
  const auto h = graph::multiply(t, x, m1);
  const auto y = graph::multiply(t, t.multiply(h, h), m2);
  t.output(t.add(y, t.multiply(x, 0.5)), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  REQUIRE(graph::find_plain_sums(plan.program, plan.nodes).sums.size() >= 2);
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  const Values x_values = random_complex(rng, kSlots);
  const Ciphertext input = f.encryptor.encrypt(f.encoder.encode(x_values, plan.input_encoding(0)));
  // round_once: the sums rounded once (RunOptions::round_sums_once), compared with a fused run's words (not the
  // node-by-node ones), however they are cached, streamed or split; otherwise each product rounded on its own.
  bool round_once = false;
  const auto run = [&](graph::ExecutorOptions options, bool fuse, std::size_t* cached = nullptr,
                        std::size_t* unscaled = nullptr) {
    std::vector<Ciphertext> inputs;
    inputs.push_back(input.clone());
    const graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, nullptr, options);
    if (cached != nullptr) *cached = executor.encode_plaintexts(2);
    Ciphertext out =
        std::move(executor.run(std::move(inputs), {}, {.fuse_plain_sums = fuse, .round_sums_once = round_once})[0]);
    if (unscaled != nullptr) *unscaled = executor.unscaled_plaintexts();
    return out;
  };
  const Ciphertext node_by_node = run({.cache_plaintexts = true}, false);
  for (const bool once : {false, true}) {
    INFO("sums rounded once: " << once);
    round_once = once;
    const bool other = once;  // the second run compared: node by node, or (rounded once) fused again
    const Ciphertext want = run({.cache_plaintexts = true}, once);
    CHECK(same_words(want, node_by_node) == !once);
    CHECK(same_words(run({.cache_plaintexts = true}, true), want));
    CHECK(same_words(run({.cache_plaintexts = false, .encode_threads = 2}, true), want));  // streamed, fused order
    CHECK(same_words(run({.cache_plaintexts = false, .encode_threads = 1}, true), want));
    // A sum computed in parts (here one product a part: the plaintexts it encodes past the byte bound), added.
    CHECK(same_words(run({.cache_plaintexts = false, .sum_plaintext_bytes = 1, .encode_threads = 2}, true), want));
    // A cache with room for a few plaintexts: the rest streamed at each run, fused or not.
    const std::size_t room =
        3 * f.context->parameters().limbs_at(f.context->max_level()) * f.context->ring_degree() * 4;
    std::size_t cached = 0;
    const graph::ExecutorOptions streamed{
        .cache_plaintexts = true, .plaintext_cache_bytes = room, .keep_rest_unscaled = false, .encode_threads = 2};
    CHECK(same_words(run(streamed, true, &cached), want));
    CHECK(cached >= 1);
    CHECK(cached <= 3);
    CHECK(same_words(run(streamed, other), want));
    // The rest kept unscaled and encoded at each use (made ahead, or on first use), all or as many as fit.
    std::size_t unscaled = 0;
    const graph::ExecutorOptions kept{.cache_plaintexts = true, .plaintext_cache_bytes = room, .encode_threads = 2};
    CHECK(same_words(run(kept, true, &cached, &unscaled), want));
    CHECK(cached > unscaled);  // encode_plaintexts counts both
    CHECK(unscaled >= 1);
    CHECK(same_words(run(kept, other, nullptr, &unscaled), want));
    CHECK(unscaled >= 1);
    graph::ExecutorOptions some = kept;
    some.unscaled_bytes = 2 * kSlots * sizeof(double);  // room for one full-period plaintext: the rest streamed
    CHECK(same_words(run(some, true, &cached, &unscaled), want));
    CHECK(unscaled <= 1);
    // Plaintexts whose period is at most unscaled_period_limit stay unscaled though the cache has room: all of them
    // at a limit of kSlots (every diagonal's period here), none below it.
    graph::ExecutorOptions short_periods{.cache_plaintexts = true, .unscaled_period_limit = kSlots, .encode_threads = 2};
    CHECK(same_words(run(short_periods, true, &cached, &unscaled), want));
    CHECK(unscaled >= 1);
    CHECK(cached == unscaled);  // encode_plaintexts made every one unscaled, none encoded
    CHECK(same_words(run(short_periods, other, nullptr, &unscaled), want));  // made on first use
    CHECK(unscaled == cached);
    short_periods.unscaled_period_limit = kSlots / 2;
    CHECK(same_words(run(short_periods, true, &cached, &unscaled), want));
    CHECK(unscaled == 0);
    CHECK(cached >= 1);
  }
  // Rounded once, the sums' outputs are as close to the plaintext result as those rounded term by term, or closer.
  round_once = true;
  const Values reference = graph::simulate_outputs(plan.program, {graph::SlotValues(x_values.begin(), x_values.end())})[0];
  const auto bits = [&](const Ciphertext& c) {
    Values got = f.encoder.decode(f.decryptor.decrypt(c));
    got.resize(kSlots);
    return precision_bits(got, reference);
  };
  const double once_bits = bits(run({.cache_plaintexts = true}, true)), each_bits = bits(node_by_node);
  INFO("precision: rounded once " << once_bits << " bits, term by term " << each_bits);
  CHECK(once_bits > 14);
  CHECK(once_bits >= each_bits - 0.5);
}

TEST_CASE("multiply_plain_rescale_sum gives the term-by-term words", "[ckks][plain_sums]") {
  auto rng = cerium_test::make_rng();
  Fixture f(toy(12, 4, 2, 2));
  const int level = f.context->max_level();
  const auto term_by_term = [&](const std::vector<const Ciphertext*>& a, const std::vector<const Plaintext*>& p) {
    Ciphertext sum = f.evaluator.rescale(f.evaluator.multiply(*a[0], *p[0]));
    for (std::size_t t = 1; t < a.size(); ++t) f.evaluator.add_inplace(sum, f.evaluator.rescale(f.evaluator.multiply(*a[t], *p[t])));
    return sum;
  };
  std::vector<Ciphertext> xs;
  std::vector<Plaintext> ps;
  for (int t = 0; t < 5; ++t) {
    xs.push_back(f.encrypt(random_complex(rng, f.max_slots()), level));
    // The last plaintext one level higher: its ciphertext meets it by dropping limbs (the unfused path).
    ps.push_back(f.encoder.encode(random_complex(rng, f.max_slots()), EncodeOptions{.level = t == 4 ? level : level - 1}));
  }
  xs.back() = f.encrypt(random_complex(rng, f.max_slots()), level - 1);
  std::vector<const Ciphertext*> a;
  std::vector<const Plaintext*> p;
  for (std::size_t t = 0; t < xs.size(); ++t) {
    a.push_back(&xs[t]);
    p.push_back(&ps[t]);
  }
  xs[0] = f.evaluator.level_down(xs[0], level - 1);
  for (std::size_t t = 1; t + 1 < xs.size(); ++t) xs[t] = f.evaluator.level_down(xs[t], level - 1);
  const Ciphertext uniform = f.evaluator.multiply_plain_rescale_sum(std::span(a).first(4), std::span(p).first(4));
  CHECK(same_words(uniform, term_by_term({a.begin(), a.begin() + 4}, {p.begin(), p.begin() + 4})));
  const Ciphertext mixed = f.evaluator.multiply_plain_rescale_sum(a, p);
  CHECK(same_words(mixed, term_by_term(a, p)));
  CHECK(mixed.level() == level - 2);
  CHECK_THROWS_AS(f.evaluator.multiply_plain_rescale_sum(std::span(a).first(2), std::span(p).first(1)), InvalidArgument);
}

TEST_CASE("multiply_plain_rescale_sum from unscaled plaintexts gives the encoded plaintexts' words",
          "[ckks][plain_sums]") {
  auto rng = cerium_test::make_rng();
  Fixture f(toy(12, 4, 2, 2));
  const int level = f.context->max_level() - 1;
  std::vector<Ciphertext> xs;
  std::vector<ckks::UnscaledPlaintext> us;
  for (const std::size_t period : {std::size_t{16}, std::size_t{16}, std::size_t{256}, f.max_slots()}) {
    xs.push_back(f.encrypt(random_complex(rng, f.max_slots()), level));
    us.push_back(f.encoder.unscaled(random_complex(rng, period), f.max_slots()));
  }
  const EncodeOptions options{.level = level, .scale = f.evaluator.level_prime_product(level)};
  std::vector<const Ciphertext*> a;
  std::vector<const ckks::UnscaledPlaintext*> u;
  std::vector<Plaintext> encoded;
  for (std::size_t t = 0; t < xs.size(); ++t) {
    a.push_back(&xs[t]);
    u.push_back(&us[t]);
    encoded.push_back(f.encoder.encode(us[t], options));
  }
  std::vector<const Plaintext*> p;
  for (const Plaintext& e : encoded) p.push_back(&e);
  const Ciphertext got = f.evaluator.multiply_plain_rescale_sum(a, u, options);
  CHECK(same_words(got, f.evaluator.multiply_plain_rescale_sum(a, p)));
  CHECK(got.level() == level - 1);
  CHECK(got.scale() == xs[0].scale());
  CHECK_THROWS_AS(f.evaluator.multiply_plain_rescale_sum(std::span(a).first(2), std::span(u).first(1), options),
                  InvalidArgument);
  // A product scale that does not fit the level, named before anything is computed.
  CHECK_THROWS_AS(f.evaluator.multiply_plain_rescale_sum(a, u, {.level = level, .scale = std::ldexp(1.0, 200)}),
                  LevelError);
}

TEST_CASE("multiply_plain_sum gives the unrescaled sum's words, from encoded or unscaled plaintexts",
          "[ckks][plain_sums]") {
  auto rng = cerium_test::make_rng();
  Fixture f(toy(12, 4, 2, 2));
  const int level = f.context->max_level() - 1;
  const EncodeOptions options{.level = level, .scale = f.evaluator.level_prime_product(level)};
  std::vector<Ciphertext> xs;
  std::vector<ckks::UnscaledPlaintext> us;
  std::vector<Plaintext> encoded;
  std::vector<Values> x_values, p_values;
  for (const std::size_t period : {std::size_t{16}, std::size_t{16}, std::size_t{256}, f.max_slots(), std::size_t{16}}) {
    x_values.push_back(random_complex(rng, f.max_slots()));
    xs.push_back(f.encrypt(x_values.back(), level));
    p_values.push_back(random_complex(rng, period));
    us.push_back(f.encoder.unscaled(p_values.back(), f.max_slots()));
    encoded.push_back(f.encoder.encode(us.back(), options));
  }
  std::vector<const Ciphertext*> a;
  std::vector<const ckks::UnscaledPlaintext*> u;
  std::vector<const Plaintext*> p;
  for (std::size_t t = 0; t < xs.size(); ++t) {
    a.push_back(&xs[t]);
    u.push_back(&us[t]);
    p.push_back(&encoded[t]);
  }
  // The eager words: each product, added, nothing rescaled.
  Ciphertext eager = f.evaluator.multiply(xs[0], encoded[0]);
  for (std::size_t t = 1; t < xs.size(); ++t) f.evaluator.add_inplace(eager, f.evaluator.multiply(xs[t], encoded[t]));
  const Ciphertext sum = f.evaluator.multiply_plain_sum(a, p);
  CHECK(same_words(sum, eager));
  CHECK(sum.level() == level);
  CHECK(sum.scale() == xs[0].scale() * options.scale);
  CHECK(same_words(f.evaluator.multiply_plain_sum(a, u, options), eager));
  // Split anywhere, the parts add up to the same words; rescaled once, the sum is the plaintext sum.
  Ciphertext parts = f.evaluator.multiply_plain_sum(std::span(a).first(2), std::span(p).first(2));
  f.evaluator.add_inplace(parts, f.evaluator.multiply_plain_sum(std::span(a).subspan(2), std::span(u).subspan(2), options));
  CHECK(same_words(parts, eager));
  Values want(f.max_slots());
  for (std::size_t t = 0; t < xs.size(); ++t) {
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += x_values[t][i] * p_values[t][i % p_values[t].size()];
  }
  const Ciphertext rescaled = f.evaluator.rescale(sum);
  CHECK(rescaled.level() == level - 1);
  CHECK(precision_bits(f.encoder.decode(f.decryptor.decrypt(rescaled)), want) > 15);
  // Bad input named: counts, a term at another level, a product scale that does not fit the level.
  CHECK_THROWS_AS(f.evaluator.multiply_plain_sum(std::span(a).first(2), std::span(p).first(1)), InvalidArgument);
  const Ciphertext lower = f.evaluator.level_down(xs[1], level - 1);
  const std::vector<const Ciphertext*> mixed = {&xs[0], &lower};
  CHECK_THROWS_AS(f.evaluator.multiply_plain_sum(mixed, std::span(p).first(2)), LevelError);
  CHECK_THROWS_AS(f.evaluator.multiply_plain_sum(a, u, {.level = level, .scale = std::ldexp(1.0, 200)}), LevelError);
}

TEST_CASE("plain sums: a value a product reads outlives later readers until the sum's root", "[graph][plain_sums]") {
  // r is read by the product p1, then last (in program order) by z, which runs before the sum's root: the fused
  // run computes p1 at the root, so r must stay alive past z (the memory plan's last use is z's).
  auto rng = cerium_test::make_rng();
  Fixture f(toy(12, 4, 2, 2), KeyRequest{.relinearization = false, .rotations = {1}});
  graph::Tracer t(f.context);
  const auto x = t.input("x", kSlots);
  const auto r = t.rotate(x, 1);
  const auto p1 = t.multiply(r, random_plain(rng));
  const auto z = t.add(r, 0.25);
  const auto p2 = t.multiply(x, random_plain(rng));
  const auto root = t.add(p1, p2);
  t.output(z, "z");
  t.output(root, "sum");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  const graph::PlainSums found = graph::find_plain_sums(plan.program, plan.nodes);
  REQUIRE(found.sums.size() == 1);
  CHECK(plan.memory.last_use[r.id()] == z.id());
  const Ciphertext input = f.encryptor.encrypt(f.encoder.encode(random_complex(rng, kSlots), plan.input_encoding(0)));
  const graph::Executor<backend::CpuBackend> executor(plan, f.evaluator, nullptr, {.cache_plaintexts = true});
  const auto run = [&](bool fuse) {
    std::vector<Ciphertext> inputs;
    inputs.push_back(input.clone());
    return executor.run(std::move(inputs), {}, {.fuse_plain_sums = fuse, .round_sums_once = false});
  };
  const auto fused = run(true), plain = run(false);
  CHECK(same_words(fused[0], plain[0]));
  CHECK(same_words(fused[1], plain[1]));
}
