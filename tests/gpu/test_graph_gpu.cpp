// Planned programs on the CUDA backend give exactly the CPU executor's words (hoisted rotations included), and the
// eager twin on the GPU gives the same words as the GPU executor without hoisting.

#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/eager.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "unit/graph/graph_test_support.hpp"

using namespace evaluator_test;

TEST_CASE("CUDA executor equals the CPU executor word for word", "[gpu][program]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 6, 2, 2), {.relinearization = true});
  auto rng = cerium_test::make_rng(4411);
  for (int trial = 0; trial < 6; ++trial) {
    const graph_test::ProgramShape shape{.seed = rng(), .operations = 16, .depth = 5, .slots = 16};
    INFO("trial " << trial << ", program seed " << shape.seed);
    graph::Tracer tracer(f.context);
    graph_test::random_program(tracer, {tracer.input("x", shape.slots), tracer.input("y", shape.slots)}, shape);
    graph::Program program = std::move(tracer).finish();
    for (const bool hoist : {true, false}) {
      graph::PlanOptions options;
      options.hoist_rotations = hoist;
      const graph::Plan plan = graph::plan(program, options);
      f.evaluator.set_galois_keys(
          std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps, plan.keys.conjugation)));
      CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
      gpu.set_relinearization_key(f.evaluator.relinearization_key());
      gpu.set_galois_keys(f.evaluator.galois_keys());

      const auto inputs = [&] {
        std::vector<Ciphertext> v;
        v.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, shape.slots), plan.input_encoding(0))));
        v.push_back(f.encryptor.encrypt(f.encoder.encode(random_complex(rng, shape.slots), plan.input_encoding(1))));
        return v;
      }();
      const auto copies = [&] {
        std::vector<Ciphertext> v;
        for (const auto& c : inputs) v.push_back(c.clone());
        return v;
      };
      const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(copies());
      const auto got = graph::Executor<backend::CudaBackend>(plan, gpu).run(copies());
      REQUIRE(got.size() == want.size());
      for (std::size_t o = 0; o < got.size(); ++o) CHECK(same_words(gpu.download(got[o]), want[o]));
      if (!hoist) {
        graph::Eager<backend::CudaBackend> eager(gpu);
        std::vector<Ciphertext> values;
        for (const auto& c : inputs) values.push_back(eager.input(c));
        graph_test::random_program(eager, std::move(values), shape);
        for (std::size_t o = 0; o < got.size(); ++o) CHECK(same_words(gpu.download(eager.outputs()[o]), want[o]));
      }
    }
  }
}

TEST_CASE("A program whose plaintexts total over 10 GB runs on a device capped at 4 GB", "[gpu][program][staging]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(16, 8, 2, 2), {});
  auto rng = cerium_test::make_rng(4412);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const std::size_t slots = f.context->parameters().max_slots();
  // y = sum_t x w_t: one sum of plaintext products, as many as make the plaintexts, fully encoded at the level the
  // plan gives them, pass 10 GB (each a full slot vector: no shorter period to compress).
  const auto trace = [&](std::size_t terms, std::vector<double>& weight_sum) {
    graph::Tracer t(f.context);
    const auto x = t.input("x", slots);
    weight_sum.assign(slots, 0.0);
    std::optional<graph::Value> y;
    for (std::size_t k = 0; k < terms; ++k) {
      std::vector<double> w(slots);
      for (std::size_t i = 0; i < slots; ++i) weight_sum[i] += (w[i] = uniform(rng) / static_cast<double>(terms));
      const graph::Value product = t.multiply(x, graph::PlainVector(std::move(w)));
      y = y.has_value() ? t.add(*y, product) : product;
    }
    t.output(*y, "y");
    return graph::plan(std::move(t).finish());
  };
  std::vector<double> weight_sum;
  const std::size_t one = trace(1, weight_sum).plaintext_encoded_bytes;
  const std::size_t terms = (std::size_t{10} << 30) / one + 64;
  const graph::Plan plan = trace(terms, weight_sum);
  INFO(terms << " plaintexts of " << one << " bytes");
  REQUIRE(plan.plaintext_encoded_bytes > (std::size_t{10} << 30));

  CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
  std::vector<double> xs(slots);
  for (auto& v : xs) v = uniform(rng);
  std::vector<Ciphertext> inputs;
  inputs.push_back(gpu.upload(f.encryptor.encrypt(f.encoder.encode(xs, plan.input_encoding(0)))));
  struct Uncap {
    ~Uncap() { cuda::set_memory_limit(0); }
  } uncap;
  cuda::set_memory_limit(std::size_t{4} << 30);
  // The cache takes 1 GB of them encoded; the rest stay unscaled on the device (N doubles each) and are encoded
  // there when the sum reaches them, at most sum_plaintext_bytes of them at a time.
  const graph::Executor<backend::CudaBackend> executor(
      plan, gpu, nullptr, {.cache_plaintexts = true, .plaintext_cache_bytes = std::size_t{1} << 30});
  CHECK(executor.encode_plaintexts() == terms);
  CHECK(executor.unscaled_plaintexts() > terms / 2);
  CHECK(executor.unscaled_plaintext_bytes() < (std::size_t{2} << 30));
  const std::vector<Ciphertext> out = executor.run(std::move(inputs));
  cuda::set_memory_limit(0);
  const std::vector<double> got = f.encoder.decode_real(f.decryptor.decrypt(gpu.download(out.at(0))));
  double worst = 0;
  for (std::size_t i = 0; i < slots; ++i) worst = std::max(worst, std::fabs(got[i] - xs[i] * weight_sum[i]));
  INFO("worst error " << worst);
  CHECK(worst < 1e-4);
}
