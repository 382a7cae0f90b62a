// nn layers on the CUDA backend give exactly the CPU executor's words: a stride-2 convolution, global average
// pooling and a dense layer in multiplexed packing, traced as one program, with plaintexts cached on the device;
// token-wise linear layers into packed-score attention with polynomial exp and reciprocal.

#include <memory>
#include <random>
#include <vector>

#include "cerium/ckks/cuda_evaluator.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/nn/attention.hpp"
#include "cerium/nn/layers.hpp"
#include "cerium/nn/nonlinear.hpp"
#include "cerium/nn/row_linear.hpp"
#include "gpu_test_support.hpp"
#include "unit/ckks/evaluator_test_support.hpp"

using namespace evaluator_test;
namespace nn = cerium::nn;

TEST_CASE("CUDA runs of nn layers equal the CPU's words", "[gpu][nn]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 6, 2, 3), {.relinearization = true});
  CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
  gpu.set_relinearization_key(f.evaluator.relinearization_key());
  auto rng = cerium_test::make_rng(515);
  std::normal_distribution<double> d(0, 0.3);
  const auto draw = [&](std::size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };

  const nn::Packing in(nn::Shape{2, 8, 8}, 256);
  const nn::Conv2d conv({.in_channels = 2, .out_channels = 4, .stride = 2}, draw(4 * 2 * 9), draw(4), in);
  const nn::GlobalAveragePool pool(conv.layer().output_packing());
  const nn::Dense dense(3, draw(3 * 4), draw(3), pool.layer().output_packing());
  graph::Tracer t(f.context);
  t.output(dense.forward(t, pool.forward(t, conv.forward(t, t.input("x", 256)))), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  gpu.set_galois_keys(f.evaluator.galois_keys());

  nn::Tensor x(in.shape());
  for (auto& v : x.values) v = d(rng);
  const Ciphertext ct = f.encryptor.encrypt(f.encoder.encode(in.pack(x), plan.input_encoding(0)));
  const auto one = [&] {
    std::vector<Ciphertext> v;
    v.push_back(ct.clone());
    return v;
  };
  const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(one());
  const auto got = graph::Executor<backend::CudaBackend>(plan, gpu, nullptr, {.cache_plaintexts = true}).run(one());
  CHECK(same_words(gpu.download(got.at(0)), want.at(0)));
}

TEST_CASE("CUDA runs of token-wise linear layers and packed-score attention equal the CPU's words", "[gpu][nn]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Fixture f(toy(12, 26, 2, 3), {.relinearization = true});
  CudaEvaluator gpu(f.context, backend::CudaBackend(f.context));
  gpu.set_relinearization_key(f.evaluator.relinearization_key());
  auto rng = cerium_test::make_rng(516);
  std::normal_distribution<double> d(0, 0.3);
  const auto draw = [&](std::size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  const nn::AttentionShape shape{.layout = {.rows = 8, .features = 16, .stride = 32}, .heads = 2, .valid_rows = 7};
  const auto small = [&](std::size_t n) {  // query and key weights that keep the scores within [-2, 2]
    std::vector<double> w = draw(n);
    for (auto& x : w) x /= 6;
    return w;
  };
  const nn::RowLinear q(shape.layout, shape.layout, small(256), small(16)), k(shape.layout, shape.layout, small(256), {}),
      v(shape.layout, shape.layout, draw(256), draw(16));
  const nn::AttentionSoftmax<nn::Exp, nn::Reciprocal> softmax{
      .upper = 2, .exp = nn::Exp({.lower = -4, .upper = 0, .tolerance = 1e-4, .scale = 1.0 / 7}),
      .reciprocal = nn::Reciprocal({.lower = 0.002, .upper = 1, .tolerance = 1e-3, .scale = 0.002}),
      .first_scale = 500};
  graph::Tracer t(f.context);
  const graph::Value x = t.input("x", shape.layout.slots());
  t.output(nn::self_attention(t, q.forward(t, x), k.forward(t, x), v.forward(t, x), shape, softmax), "y");
  const graph::Plan plan = graph::plan(std::move(t).finish());
  f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
  gpu.set_galois_keys(f.evaluator.galois_keys());
  const Ciphertext ct = f.encryptor.encrypt(f.encoder.encode(draw(shape.layout.slots()), plan.input_encoding(0)));
  const auto one = [&] {
    std::vector<Ciphertext> in;
    in.push_back(ct.clone());
    return in;
  };
  const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(one());
  const auto got = graph::Executor<backend::CudaBackend>(plan, gpu, nullptr, {.cache_plaintexts = true}).run(one());
  CHECK(same_words(gpu.download(got.at(0)), want.at(0)));
}
