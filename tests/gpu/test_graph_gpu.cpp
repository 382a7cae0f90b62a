// Planned programs on the CUDA backend give exactly the CPU executor's words (hoisted rotations included), and the
// eager twin on the GPU gives the same words as the GPU executor without hoisting; runs recorded as CUDA graphs
// (graph::CapturedRun) give the executor's words for fresh inputs; precise bootstraps give the CPU's words.

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "cerium/backend/cuda/memory.hpp"
#include "cerium/backend/cuda/stream.hpp"
#include "cerium/boot/cuda_bootstrapper.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/captured_run.hpp"
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

namespace {

std::vector<Ciphertext> clones(const std::vector<Ciphertext>& values) {
  std::vector<Ciphertext> out;
  for (const auto& v : values) out.push_back(v.clone());
  return out;
}

}  // namespace

TEST_CASE("A run captured as CUDA graphs gives the executor's words for fresh inputs", "[gpu][program][capture]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 6, 2, 2), {.relinearization = true});
  auto rng = cerium_test::make_rng(4413);
  for (int trial = 0; trial < 4; ++trial) {
    const graph_test::ProgramShape shape{.seed = rng(), .operations = 24, .depth = 5, .slots = 16};
    INFO("trial " << trial << ", program seed " << shape.seed);
    graph::Tracer tracer(f.context);
    graph_test::random_program(tracer, {tracer.input("x", shape.slots), tracer.input("y", shape.slots)}, shape);
    const graph::Plan plan = graph::plan(std::move(tracer).finish());
    f.evaluator.set_galois_keys(
        std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps, plan.keys.conjugation)));
    CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
    gpu.set_relinearization_key(f.evaluator.relinearization_key());
    gpu.set_galois_keys(f.evaluator.galois_keys());
    const auto fresh = [&] {
      std::vector<Ciphertext> v;
      for (std::size_t i = 0; i < 2; ++i) {
        v.push_back(gpu.upload(
            f.encryptor.encrypt(f.encoder.encode(random_complex(rng, shape.slots), plan.input_encoding(i)))));
      }
      return v;
    };
    // Plaintexts encoded in the cache, then all of them kept unscaled (encoded on the device inside the graphs).
    for (const std::size_t cache_bytes : {std::size_t{0}, std::size_t{1}}) {
      const graph::Executor<backend::CudaBackend> executor(
          plan, gpu, nullptr, {.cache_plaintexts = true, .plaintext_cache_bytes = cache_bytes});
      for (const std::size_t segment : {std::size_t{0}, std::size_t{7}}) {
        INFO("cache bytes " << cache_bytes << ", segment nodes " << segment);
        const std::vector<Ciphertext> examples = fresh();
        const graph::CapturedRun<backend::CudaBackend> captured(executor, examples, {.segment_nodes = segment});
        CHECK(captured.segments() == (segment == 0 ? 1 : (plan.program.size() + segment - 1) / segment));
        const auto eager_first = executor.run(clones(examples));
        for (std::size_t o = 0; o < eager_first.size(); ++o) {
          CHECK(same_words(gpu.download(captured.outputs()[o]), gpu.download(eager_first[o])));
        }
        for (int round = 0; round < 2; ++round) {
          const std::vector<Ciphertext> inputs = fresh();
          const auto want = executor.run(clones(inputs));
          const auto got = captured.run(inputs);
          REQUIRE(got.size() == want.size());
          for (std::size_t o = 0; o < got.size(); ++o) {
            CHECK(got[o].level() == want[o].level());
            CHECK(got[o].scale() == want[o].scale());
            CHECK(same_words(gpu.download(got[o]), gpu.download(want[o])));
          }
        }
        // Side by side: two more recorded runs started on streams of their own, then collected: each gives the
        // executor's words for its inputs.
        {
          const graph::CapturedRun<backend::CudaBackend> second(executor, examples, {.segment_nodes = segment});
          const std::array<const graph::CapturedRun<backend::CudaBackend>*, 2> runs = {&captured, &second};
          const std::array<cuda::Stream, 2> streams = {cuda::Stream::create(), cuda::Stream::create()};
          const std::array<std::vector<Ciphertext>, 2> inputs = {fresh(), fresh()};
          for (std::size_t k = 0; k < 2; ++k) runs[k]->start(inputs[k], streams[k]);
          for (std::size_t k = 0; k < 2; ++k) {
            const auto got = runs[k]->collect(streams[k]);
            const auto want = executor.run(clones(inputs[k]));
            for (std::size_t o = 0; o < got.size(); ++o) CHECK(same_words(gpu.download(got[o]), gpu.download(want[o])));
          }
        }
        // Host inputs are uploaded into the recorded buffers; another shape is refused by name.
        const std::vector<Ciphertext> inputs = fresh();
        std::vector<Ciphertext> on_host;
        for (const auto& c : inputs) on_host.push_back(gpu.download(c));
        const auto want = executor.run(clones(inputs));
        const auto got = captured.run(on_host);
        CHECK(same_words(gpu.download(got.at(0)), gpu.download(want.at(0))));
        std::vector<Ciphertext> lower = clones(inputs);
        lower[0] = gpu.upload(f.encryptor.encrypt(
            f.encoder.encode(random_complex(rng, shape.slots), {.level = plan.input_encoding(0).level - 1,
                                                                 .slots = shape.slots})));
        CHECK_THROWS_AS(captured.run(lower), InvalidArgument);
      }
    }
    // Runs that need the host are refused before anything is recorded.
    const graph::Executor<backend::CudaBackend> uncached(plan, gpu);
    CHECK_THROWS_AS(graph::CapturedRun<backend::CudaBackend>(uncached, fresh()), UnsupportedError);
    const graph::Executor<backend::CudaBackend> streamed(
        plan, gpu, nullptr, {.cache_plaintexts = true, .plaintext_cache_bytes = 1, .keep_rest_unscaled = false});
    if (plan.plaintext_encoded_bytes > 0) {
      CHECK_THROWS_AS(graph::CapturedRun<backend::CudaBackend>(streamed, fresh()), UnsupportedError);
    }
  }
}

TEST_CASE("A captured run with placed bootstraps gives the executor's words", "[gpu][program][capture][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(presets::bootstrappable_toy(12, 24), {.relinearization = true});
  boot::CudaBootstrapper bootstrapper(f.context, boot::BootstrapConfig{}, backend::CudaBackend(f.context));
  bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  // x <- x^2 / 2 + 1/4 twenty times, plus a plaintext product: 41 levels of products, so the planner places
  // bootstraps.
  graph::Tracer t(f.context);
  auto x = t.input("x");
  auto rng = cerium_test::make_rng(4414);
  const Values weights = random_real(rng, f.max_slots());
  for (int i = 0; i < 20; ++i) x = t.add(t.multiply(t.multiply(x, x), 0.5), 0.25);
  x = t.multiply(x, graph::PlainVector(weights));
  t.output(x, "x");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(bootstrapper);
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  REQUIRE(plan.bootstraps() > 0);
  const auto& gpu = bootstrapper.evaluator();
  const graph::Executor<backend::CudaBackend> executor(plan, gpu, &bootstrapper, {.cache_plaintexts = true});
  const auto encrypt = [&] {
    std::vector<Ciphertext> v;
    v.push_back(gpu.upload(f.encryptor.encrypt(f.encoder.encode(random_real(rng, f.max_slots()), plan.input_encoding(0)))));
    return v;
  };
  const graph::CapturedRun<backend::CudaBackend> captured(executor, encrypt(), {.segment_nodes = 9});
  for (int round = 0; round < 2; ++round) {
    const std::vector<Ciphertext> inputs = encrypt();
    const auto want = executor.run(clones(inputs));
    const auto got = captured.run(inputs);
    CHECK(same_words(gpu.download(got.at(0)), gpu.download(want.at(0))));
  }
}

// A CPU and a GPU bootstrapper on the bootstrappable toy parameters (N = 2^12), one set of keys; the evaluator's
// own rotation keys dropped (a planned run needs the bootstrapper's only).
struct TwinBootstrappers {
  Fixture f{presets::bootstrappable_toy(12, 24), {.relinearization = true}};
  boot::Bootstrapper cpu{f.context};
  boot::CudaBootstrapper gpu{f.context, boot::BootstrapConfig{}, backend::CudaBackend(f.context)};
  TwinBootstrappers() {
    const auto keys = std::make_shared<const boot::BootstrapKeys>(cpu.generate_keys(f.keygen));
    cpu.set_keys(keys);
    gpu.set_keys(keys);
    f.evaluator.set_galois_keys(nullptr);
  }
};

TEST_CASE("Precise bootstraps on the GPU give the CPU executor's words", "[gpu][program][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  TwinBootstrappers twins;
  auto& [f, cpu_bootstrapper, gpu_bootstrapper] = twins;
  // x <- 1.0625 x, then 1 / 1.0625 x, 30 times: more levels than the parameters have, every bootstrap precise
  // (two bootstraps, a level change and a subtraction each).
  graph::Tracer t(f.context);
  auto x = t.input("x");
  for (int i = 0; i < 30; ++i) x = t.multiply(x, i % 2 == 0 ? 1.0625 : 1 / 1.0625);
  t.output(x, "x");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(cpu_bootstrapper);
  options.precise_bootstraps = true;
  const graph::Plan plan = graph::plan(std::move(t).finish(), options);
  REQUIRE(plan.precise_bootstraps() > 0);
  auto rng = cerium_test::make_rng(4415);
  const Ciphertext input =
      f.encryptor.encrypt(f.encoder.encode(random_real(rng, f.max_slots()), plan.input_encoding(0)));
  std::vector<Ciphertext> cpu_inputs, gpu_inputs;
  cpu_inputs.push_back(input.clone());
  const auto& gpu = gpu_bootstrapper.evaluator();
  gpu_inputs.push_back(gpu.upload(input));
  const graph::Executor<backend::CpuBackend> cpu_executor(plan, f.evaluator, &cpu_bootstrapper);
  const graph::Executor<backend::CudaBackend> gpu_executor(plan, gpu, &gpu_bootstrapper);
  const auto want = cpu_executor.run(std::move(cpu_inputs));
  const auto got = gpu_executor.run(std::move(gpu_inputs));
  CHECK(same_words(gpu.download(got.at(0)), want.at(0)));
}

TEST_CASE("Paired bootstraps on the GPU give the CPU executor's words, captured or not, precise or not",
          "[gpu][program][bootstrap][pairs]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  TwinBootstrappers twins;
  auto& [f, cpu_bootstrapper, gpu_bootstrapper] = twins;
  // Two chains x <- x^2 / 2 + 1/4 (twenty times) and a plaintext product each, traced one after the other: the
  // plan reorders them so that their bootstraps run in pairs.
  auto rng = cerium_test::make_rng(4416);
  graph::Tracer t(f.context);
  std::array<graph::Value, 2> x = {t.input("x"), t.input("y")};
  for (auto& v : x) {
    for (int i = 0; i < 20; ++i) v = t.add(t.multiply(t.multiply(v, v), 0.5), 0.25);
    v = t.multiply(v, graph::PlainVector(random_real(rng, f.max_slots())));
  }
  t.output(x[0], "x");
  t.output(x[1], "y");
  graph::PlanOptions options;
  options.bootstrap = graph::bootstrap_spec(cpu_bootstrapper);
  options.pair_bootstraps = true;
  const graph::Program traced = std::move(t).finish();
  const graph::Plan plan = graph::plan(traced, options);
  REQUIRE(plan.bootstrap_pairs() > 0);
  const auto& gpu = gpu_bootstrapper.evaluator();
  const auto encrypt = [&] {
    std::vector<Ciphertext> v;
    for (std::size_t i = 0; i < 2; ++i) {
      v.push_back(f.encryptor.encrypt(f.encoder.encode(random_real(rng, f.max_slots()), plan.input_encoding(i))));
    }
    return v;
  };
  const auto upload = [&](const std::vector<Ciphertext>& host) {
    std::vector<Ciphertext> v;
    for (const auto& c : host) v.push_back(gpu.upload(c));
    return v;
  };
  const graph::Executor<backend::CpuBackend> cpu_executor(plan, f.evaluator, &cpu_bootstrapper);
  const graph::Executor<backend::CudaBackend> gpu_executor(plan, gpu, &gpu_bootstrapper, {.cache_plaintexts = true});
  const std::vector<Ciphertext> inputs = encrypt();
  const auto want = cpu_executor.run(clones(inputs));
  const auto got = gpu_executor.run(upload(inputs));
  for (std::size_t i = 0; i < 2; ++i) CHECK(same_words(gpu.download(got.at(i)), want.at(i)));
  // Captured in short segments: a pair's first value waits across a segment's end.
  const graph::CapturedRun<backend::CudaBackend> captured(gpu_executor, upload(encrypt()), {.segment_nodes = 7});
  const std::vector<Ciphertext> fresh = encrypt();
  const auto replayed = captured.run(upload(fresh));
  const auto direct = cpu_executor.run(clones(fresh));
  for (std::size_t i = 0; i < 2; ++i) CHECK(same_words(gpu.download(replayed.at(i)), direct.at(i)));
  // Precise pairs: both steps of each run as pairs.
  options.precise_bootstraps = true;
  const graph::Plan precise = graph::plan(traced, options);
  REQUIRE(precise.bootstrap_pairs() > 0);
  const graph::Executor<backend::CpuBackend> cpu_precise(precise, f.evaluator, &cpu_bootstrapper);
  const graph::Executor<backend::CudaBackend> gpu_precise(precise, gpu, &gpu_bootstrapper);
  const auto precise_want = cpu_precise.run(clones(inputs));
  const auto precise_got = gpu_precise.run(upload(inputs));
  for (std::size_t i = 0; i < 2; ++i) CHECK(same_words(gpu.download(precise_got.at(i)), precise_want.at(i)));
}
