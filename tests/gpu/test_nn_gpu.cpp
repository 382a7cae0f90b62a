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

namespace {

// A CPU fixture and a CUDA evaluator with its relinearization key, and normally distributed draws.
struct Setup {
  Fixture f;
  CudaEvaluator gpu;
  std::mt19937_64 rng;
  std::normal_distribution<double> d{0, 0.3};
  Setup(const CkksConfig& config, std::uint64_t salt)
      : f(config, {.relinearization = true}),
        gpu(f.context, backend::CudaBackend(f.context)),
        rng(cerium_test::make_rng(salt)) {
    gpu.set_relinearization_key(f.evaluator.relinearization_key());
  }
  std::vector<double> draw(std::size_t n) {
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }
  // Plans the program, gives both evaluators its rotation keys, runs it on an encryption of `input` on the
  // CPU and on the GPU (plaintexts cached there) and checks that the words agree.
  void check_same_words(graph::Program program, const std::vector<double>& input) {
    const graph::Plan plan = graph::plan(std::move(program));
    f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
    gpu.set_galois_keys(f.evaluator.galois_keys());
    const Ciphertext ct = f.encryptor.encrypt(f.encoder.encode(input, plan.input_encoding(0)));
    const auto one = [&] {
      std::vector<Ciphertext> v;
      v.push_back(ct.clone());
      return v;
    };
    const auto want = graph::Executor<backend::CpuBackend>(plan, f.evaluator).run(one());
    const auto got = graph::Executor<backend::CudaBackend>(plan, gpu, nullptr, {.cache_plaintexts = true}).run(one());
    CHECK(same_words(gpu.download(got.at(0)), want.at(0)));
  }
};

}  // namespace

TEST_CASE("CUDA runs of nn layers equal the CPU's words", "[gpu][nn]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Setup s(toy(12, 6, 2, 3), 515);
  const nn::Packing in(nn::Shape{2, 8, 8}, 256);
  const nn::Conv2d conv({.in_channels = 2, .out_channels = 4, .stride = 2}, s.draw(4 * 2 * 9), s.draw(4), in);
  const nn::GlobalAveragePool pool(conv.layer().output_packing());
  const nn::Dense dense(3, s.draw(3 * 4), s.draw(3), pool.layer().output_packing());
  graph::Tracer t(s.f.context);
  t.output(dense.forward(t, pool.forward(t, conv.forward(t, t.input("x", 256)))), "y");
  nn::Tensor x(in.shape());
  x.values = s.draw(x.values.size());
  s.check_same_words(std::move(t).finish(), in.pack(x));
}

TEST_CASE("CUDA runs of token-wise linear layers and packed-score attention equal the CPU's words", "[gpu][nn]") {
  CERIUM_SKIP_WITHOUT_DEVICE();
  Setup s(toy(12, 26, 2, 3), 516);
  const nn::AttentionShape shape{.layout = {.rows = 8, .features = 16, .stride = 32}, .heads = 2, .valid_rows = 7};
  const auto small = [&](std::size_t n) {  // query and key weights that keep the scores within [-2, 2]
    std::vector<double> w = s.draw(n);
    for (auto& x : w) x /= 6;
    return w;
  };
  const nn::RowLinear q(shape.layout, shape.layout, small(256), small(16)), k(shape.layout, shape.layout, small(256), {}),
      v(shape.layout, shape.layout, s.draw(256), s.draw(16));
  const nn::AttentionSoftmax<nn::Exp, nn::Reciprocal> softmax{
      .upper = 2, .exp = nn::Exp({.lower = -4, .upper = 0, .tolerance = 1e-4, .scale = 1.0 / 7}),
      .reciprocal = nn::Reciprocal({.lower = 0.002, .upper = 1, .tolerance = 1e-3, .scale = 0.002}),
      .first_scale = 500};
  graph::Tracer t(s.f.context);
  const graph::Value x = t.input("x", shape.layout.slots());
  t.output(nn::self_attention(t, q.forward(t, x), k.forward(t, x), v.forward(t, x), shape, softmax), "y");
  s.check_same_words(std::move(t).finish(), s.draw(shape.layout.slots()));
}
