// Circuits over any ops object: polynomials and matrix products computed on doubles by the same code agree with
// direct evaluation, and traced into a program graph they plan, run and decrypt to those values; the eager twin
// gives the executor's words.

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "cerium/circuits/diagonal_matrix.hpp"
#include "cerium/circuits/polynomial.hpp"
#include "cerium/graph/circuits.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "graph_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
using graph_test::ReferenceOps;
using graph_test::Slots;

namespace {

std::vector<circuits::Polynomial> test_polynomials() {
  return {
      circuits::Polynomial::chebyshev_interpolant([](long double t) { return 1 / (1 + std::exp(-t)); }, 31, -8, 8),
      circuits::Polynomial::chebyshev_interpolant([](long double t) { return std::tanh(2 * t); }, 27),  // odd
      circuits::Polynomial::chebyshev_interpolant([](long double t) { return std::cos(3 * t); }, 12),   // even
      circuits::Polynomial::power({0.25, -0.5, 0.0, 0.75, 0.125, -0.0625}),
      circuits::Polynomial::chebyshev_interpolant([](long double t) { return t * t; }, 2),
  };
}

double direct(const circuits::Polynomial& p, double x) {
  if (p.basis == circuits::PolynomialBasis::power) {
    double sum = 0;
    for (std::size_t k = p.coefficients.size(); k-- > 0;) sum = sum * x + p.coefficients[k];
    return sum;
  }
  return circuits::chebyshev_evaluate(p.coefficients, (2 * x - p.lower - p.upper) / (p.upper - p.lower));
}

double worst_bits(const Values& got, const Slots& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst == 0 ? 60 : -std::log2(worst);
}

}  // namespace

TEST_CASE("polynomials over ops: doubles equal direct evaluation", "[graph][circuits]") {
  auto rng = cerium_test::make_rng(17);
  for (const auto& p : test_polynomials()) {
    INFO("degree " << p.degree());
    std::uniform_real_distribution<double> d(p.lower, p.upper);
    Slots x(32);
    for (auto& v : x) v = d(rng);
    ReferenceOps ops;
    const Slots y = graph::evaluate(ops, x, p);
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::abs(y[i] - direct(p, x[i].real())) < 1e-9);
  }
}

TEST_CASE("polynomials and matrix products traced, planned and run", "[graph][circuits]") {
  Fixture f(toy(12, 12, 2, 3), {.relinearization = true});
  auto rng = cerium_test::make_rng(18);
  INFO("test seed " << cerium_test::test_seed());
  constexpr std::size_t slots = 16;

  SECTION("polynomials") {
    for (const auto& p : test_polynomials()) {
      INFO("degree " << p.degree());
      graph::Tracer t(f.context);
      t.output(graph::evaluate(t, t.input("x", slots), p), "p(x)");
      graph::PlanOptions options;
      options.hoist_rotations = false;
      const graph::Plan plan = graph::plan(std::move(t).finish(), options);
      const int used = f.context->max_level() - plan.nodes[plan.program.node(plan.program.outputs()[0]).inputs[0]].level;
      CHECK(used <= static_cast<int>(std::ceil(std::log2(p.degree() + 1))) + 1 + (p.maps_interval() ? 1 : 0));

      std::uniform_real_distribution<double> d(p.lower, p.upper);
      Slots x(slots);
      for (auto& v : x) v = d(rng);
      std::vector<Ciphertext> inputs;
      inputs.push_back(f.encryptor.encrypt(f.encoder.encode(x, plan.input_encoding(0))));
      const Ciphertext input = inputs[0].clone();
      const auto out = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
      Slots want(slots);
      for (std::size_t i = 0; i < slots; ++i) want[i] = direct(p, x[i].real());
      CHECK(worst_bits(f.decrypt(out[0]), want) >= 14);

      graph::Eager<backend::CpuBackend> eager(f.evaluator);
      CHECK(same_words(graph::evaluate(eager, eager.input(input), p), out[0]));
    }
  }

  SECTION("matrix products") {
    std::vector<std::vector<double>> rows(slots, std::vector<double>(slots));
    std::uniform_real_distribution<double> d(-1, 1);
    for (auto& row : rows) {
      for (auto& v : row) v = d(rng);
    }
    auto banded = circuits::DiagonalMatrix::identity(slots);
    banded.add_diagonal(3, std::vector<circuits::Complex>{0.5, -0.5});  // compressed: period 2
    for (const auto& m : {circuits::DiagonalMatrix::from_dense(rows), banded}) {
      Slots x(slots);
      for (auto& v : x) v = d(rng);
      ReferenceOps reference;
      const Slots want = graph::multiply(reference, x, m);
      const std::vector<circuits::Complex> xs(x.begin(), x.end());
      const auto direct_product = circuits::apply(m, xs);
      for (std::size_t i = 0; i < slots; ++i) CHECK(std::abs(want[i] - direct_product[i]) < 1e-12);

      graph::Tracer t(f.context);
      t.output(graph::multiply(t, t.input("x", slots), m), "Mx");
      const graph::Plan plan = graph::plan(std::move(t).finish());
      f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
      std::set<std::int64_t> bsgs_steps;  // the BSGS plan's steps, taken mod slots as the tracer keeps them
      for (const auto s : circuits::plan_bsgs(m).rotation_steps()) {
        bsgs_steps.insert(((s % std::int64_t{slots}) + std::int64_t{slots}) % std::int64_t{slots});
      }
      CHECK(plan.keys.steps == std::vector<std::int64_t>(bsgs_steps.begin(), bsgs_steps.end()));
      std::vector<Ciphertext> inputs;
      inputs.push_back(f.encryptor.encrypt(f.encoder.encode(x, plan.input_encoding(0))));
      const auto out = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(std::move(inputs));
      CHECK(out[0].level() == f.context->max_level() - 1);
      CHECK(worst_bits(f.decrypt(out[0]), want) >= 14);
    }
  }

  SECTION("a prepared matrix shares its plaintexts between the ciphertexts it multiplies") {
    std::vector<std::vector<double>> rows(slots, std::vector<double>(slots));
    std::uniform_real_distribution<double> d(-1, 1);
    for (auto& row : rows) {
      for (auto& v : row) v = d(rng);
    }
    const graph::BsgsProduct product = graph::prepare_product(circuits::DiagonalMatrix::from_dense(rows));
    const std::size_t diagonals = product.diagonals.size();
    graph::Tracer t(f.context);
    t.output(graph::multiply(t, t.input("x", slots), product), "Mx");
    t.output(graph::multiply(t, t.input("y", slots), product), "My");
    const graph::Plan plan = graph::plan(std::move(t).finish());
    const std::size_t n = f.context->ring_degree();
    CHECK(plan.plaintext_encoded_bytes == diagonals * f.context->limbs_at(f.context->max_level()) * n * 4);
    f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
    std::vector<Slots> x(2, Slots(slots));
    for (auto& xs : x) {
      for (auto& v : xs) v = {d(rng), d(rng)};
    }
    const auto encrypted = [&] {
      std::vector<Ciphertext> inputs;
      for (std::size_t k = 0; k < 2; ++k) {
        inputs.push_back(f.encryptor.encrypt(f.encoder.encode(x[k], plan.input_encoding(k))));
      }
      return inputs;
    };
    const std::vector<Ciphertext> inputs = encrypted();
    const auto copies = [&] {
      std::vector<Ciphertext> out;
      for (const auto& c : inputs) out.push_back(c.clone());
      return out;
    };
    // Encoded at each use (the reference words), cached (each diagonal once), kept unscaled (each once).
    const auto each_use = graph::Executor<backend::CpuBackend>(plan, f.evaluator, nullptr, {.encode_threads = 1})
                              .run(copies());
    const graph::Executor<backend::CpuBackend> cached(plan, f.evaluator, nullptr, {.cache_plaintexts = true});
    CHECK(cached.host_encoded_plaintexts() == 2 * diagonals);
    CHECK(cached.encode_plaintexts(2) == diagonals);
    CHECK(cached.host_encoded_plaintexts() == 0);
    CHECK(cached.plaintext_cache_bytes() == plan.plaintext_encoded_bytes);
    const auto from_cache = cached.run(copies());
    CHECK(cached.plaintexts_encoded() == diagonals);
    const graph::Executor<backend::CpuBackend> unscaled(plan, f.evaluator, nullptr,
                                                        {.cache_plaintexts = true, .plaintext_cache_bytes = 1});
    const auto from_unscaled = unscaled.run(copies());
    CHECK(unscaled.unscaled_plaintexts() == diagonals);
    CHECK(unscaled.plaintexts_encoded() == 0);
    ReferenceOps reference;
    for (std::size_t k = 0; k < 2; ++k) {
      CHECK(same_words(from_cache[k], each_use[k]));
      CHECK(same_words(from_unscaled[k], each_use[k]));
      CHECK(worst_bits(f.decrypt(each_use[k]), graph::multiply(reference, x[k], product)) >= 14);
    }
  }
}
