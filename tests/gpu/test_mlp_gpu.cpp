// Encrypted perceptron training on the GPU (nn/mlp_training.hpp, as examples/train_mlp.cpp runs it): a step with
// compact weights and planned bootstraps, run three times with each step's weights fed back, on the CPU executor
// and on the GPU the way `train_mlp --capture` does (step 0 node by node, step 1 the recording's eager run,
// step 2 replayed from CUDA graphs): the same words after every step.

#include <cmath>
#include <complex>
#include <memory>
#include <vector>

#include "cerium/backend/cuda_backend.hpp"
#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/captured_run.hpp"
#include "cerium/graph/executor.hpp"
#include "gpu_test_support.hpp"
#include "planned_twins.hpp"
#include "unit/nn/mlp_test_support.hpp"

using namespace mlp_test;

TEST_CASE("Training steps on the GPU, node by node and replayed, give the CPU's words", "[gpu][nn][mlp][bootstrap]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  auto rng = cerium_test::make_rng(805);
  INFO("test seed " << cerium_test::test_seed());
  nn::MlpShape shape = kShape;
  shape.compact_weights = true;
  shape.refresh_weights = true;
  const nn::MlpTrainer trainer(shape);
  Fixture f(presets::bootstrappable_toy(12, 27), {.relinearization = true});
  const std::size_t slots = shape.slots();
  const nn::MlpWeights initial = nn::MlpWeights::seeded(shape, 11);
  std::vector<Batch> batches;
  for (int s = 0; s < 3; ++s) batches.push_back(random_batch(shape, rng));
  const graph::Plan plan = plan_refreshed_step(f, trainer, batches[0], initial);
  REQUIRE(plan.bootstraps() > 0);

  // One set of keys for both backends (seeded, as the examples make them: the GPU expands them).
  gpu_test::PlannedTwins twins(f.context, f.keygen, plan, slots);
  Evaluator& cpu = twins.cpu;
  CudaEvaluator& gpu = twins.gpu;
  const graph::Executor<backend::CpuBackend> cpu_executor(plan, cpu, &twins.cpu_bootstrapper);
  const graph::Executor<backend::CudaBackend> gpu_executor(plan, gpu, &twins.gpu_bootstrapper,
                                                           {.cache_plaintexts = true});

  std::vector<Ciphertext> cpu_weights = encrypt_weights(f, trainer, initial, plan);
  std::vector<Ciphertext> gpu_weights;
  for (const auto& c : cpu_weights) gpu_weights.push_back(gpu.upload(c));
  std::unique_ptr<const graph::CapturedRun<backend::CudaBackend>> captured;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    INFO("step " << s);
    const std::vector<Ciphertext> batch = encrypt_batch(f, trainer, batches[s], plan);
    std::vector<Ciphertext> cpu_inputs, gpu_inputs;
    for (const auto& c : batch) {
      cpu_inputs.push_back(c.clone());
      gpu_inputs.push_back(gpu.upload(c));
    }
    for (auto& c : cpu_weights) cpu_inputs.push_back(std::move(c));
    for (auto& c : gpu_weights) gpu_inputs.push_back(std::move(c));
    cpu_weights = cpu_executor.run(std::move(cpu_inputs));
    if (s == 0) {
      gpu_weights = gpu_executor.run(std::move(gpu_inputs));
    } else if (s == 1) {
      captured = std::make_unique<const graph::CapturedRun<backend::CudaBackend>>(gpu_executor, gpu_inputs);
      gpu_weights.clear();
      for (const auto& c : captured->outputs()) gpu_weights.push_back(c.clone());
    } else {
      gpu_weights = captured->run(gpu_inputs);
    }
    REQUIRE(gpu_weights.size() == cpu_weights.size());
    for (std::size_t w = 0; w < cpu_weights.size(); ++w) {
      INFO("weight ciphertext " << w);
      CHECK(same_words(gpu.download(gpu_weights[w]), cpu_weights[w]));
    }
  }
  // And the weights are still the twin's (the steps did what they should).
  nn::MlpWeights twin = initial;
  for (const Batch& b : batches) twin = twin_step(trainer, twin, b);
  std::vector<std::vector<std::complex<double>>> rows;
  for (const auto& c : cpu_weights) rows.push_back(f.decrypt(c));
  CHECK(weight_difference(trainer.unpack_weights(rows), twin) < std::exp2(-8));
}
