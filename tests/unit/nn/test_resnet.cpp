// A reduced ResNet (the same code as ResNet-20: two stages, a stride-2 stage with its 1x1 shortcut, 2 and 4
// channels, 8x8 inputs) end to end on the CPU: traced, bootstraps placed by the planner, run on ciphertexts at
// N = 2^12; its logits decrypt to the plaintext twin's (the same polynomial ReLUs) within 2^-10 and stay near the
// exact-ReLU reference.

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/explain.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/io/weights.hpp"
#include "cerium/nn/resnet.hpp"
#include "unit/ckks/evaluator_test_support.hpp"
#include "support/catch.hpp"

using namespace evaluator_test;
namespace nn = cerium::nn;

namespace {

// The logits from the output slots (real parts), unpacked by the model's output packing.
template <class Slots>
nn::Tensor logits(const nn::ResNet& model, const Slots& slots) {
  std::vector<double> real(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) real[i] = slots[i].real();
  return model.output_packing().unpack(real);
}

// The reduced ResNet with its ReLU range calibrated on four random images, and a bootstrapper for its slots at
// N = 2^12.
struct ReducedResNet {
  static constexpr std::size_t slots = 256;
  nn::ResNetConfig config{.input = {1, 8, 8}, .channels = {2, 4}, .blocks = 1, .classes = 3, .slots = slots,
                          .relu_bound = 1, .relu_stages = 0, .relu_degree = 31};
  nn::ResNet model = nn::ResNet::seeded(config, 7);
  std::vector<nn::Tensor> images;
  Fixture f{presets::bootstrappable_toy(12, 24), {.relinearization = true}};
  boot::Bootstrapper bootstrapper{f.context, boot::BootstrapConfig{.slots = slots}};

  explicit ReducedResNet(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> pixel(0, 1);
    for (int i = 0; i < 4; ++i) {
      nn::Tensor t(config.input);
      for (auto& v : t.values) v = pixel(rng);
      images.push_back(t);
    }
    model = model.with_relu_bound(1.25 * model.activation_range(images));
    bootstrapper.set_keys(std::make_shared<const boot::BootstrapKeys>(bootstrapper.generate_keys(f.keygen)));
  }

  // The model traced on `count` images (inputs image0.., outputs logits0..), planned, run on images[0..count), each
  // output's logits checked against the twin (2^-10) and the twin against the exact reference.
  graph::Plan run(std::size_t count, bool pair) {
    graph::Tracer t(f.context);
    for (std::size_t k = 0; k < count; ++k) {
      t.output(model.forward(t, t.input("image" + std::to_string(k), slots)), "logits" + std::to_string(k));
    }
    graph::PlanOptions options;
    options.bootstrap = graph::bootstrap_spec(bootstrapper);
    options.pair_bootstraps = pair;
    graph::Plan plan = graph::plan(std::move(t).finish(), options);
    INFO(graph::summary(plan));
    CHECK(plan.bootstraps() >= 1);
    f.evaluator.set_galois_keys(std::make_shared<const GaloisKeys>(f.keygen.galois_keys(plan.keys.steps)));
    std::vector<Ciphertext> inputs;
    for (std::size_t k = 0; k < count; ++k) {
      inputs.push_back(
          f.encryptor.encrypt(f.encoder.encode(model.input_packing().pack(images[k]), plan.input_encoding(k))));
    }
    const auto out = graph::Executor<backend::CpuBackend>(plan, f.evaluator, &bootstrapper).run(std::move(inputs));
    for (std::size_t k = 0; k < count; ++k) {
      // The logits where the output packing puts them (logit 2 is in slot 8 here, not slot 2).
      const nn::Tensor decoded = logits(model, f.decrypt(out.at(k)));
      graph::PlainOps plain;
      const auto packed = model.input_packing().pack(images[k]);
      const nn::Tensor twin = logits(model, model.forward(plain, graph::PlainOps::Value(packed.begin(), packed.end())));
      const nn::Tensor exact = model.reference(images[k]);
      for (std::size_t c = 0; c < config.classes; ++c) {
        INFO("image " << k << ", logit " << c << ": encrypted " << decoded.values[c] << ", twin " << twin.values[c]
                      << ", exact " << exact.values[c]);
        CHECK(std::abs(decoded.values[c] - twin.values[c]) < std::exp2(-10));
        CHECK(std::abs(twin.values[c] - exact.values[c]) < 0.1);
      }
    }
    return plan;
  }
};

}  // namespace

TEST_CASE("a reduced ResNet runs encrypted end to end with planned bootstraps", "[nn][resnet][heavy]") {
  auto rng = cerium_test::make_rng(404);
  INFO("test seed " << cerium_test::test_seed());
  ReducedResNet net(rng);
  (void)net.run(1, false);
}

// Two images traced into one program (cerium_example_resnet20 --pair-images): their bootstraps pair, one bootstrap
// refreshing a value of each, and both keep the twin's logits.
TEST_CASE("a reduced ResNet on two images at once pairs every bootstrap", "[nn][resnet][pairs][heavy]") {
  auto rng = cerium_test::make_rng(405);
  INFO("test seed " << cerium_test::test_seed());
  ReducedResNet net(rng);
  const graph::Plan plan = net.run(2, true);
  CHECK(plan.bootstrap_pairs() * 2 == static_cast<std::size_t>(plan.bootstraps()));
}

TEST_CASE("ResNet weights through a weight file: the same network; absent or misshapen tensors named", "[nn][weights]") {
  const nn::ResNetConfig config{.input = {1, 8, 8}, .channels = {2, 4}, .blocks = 1, .classes = 3, .slots = 256,
                                .relu_bound = 100, .relu_stages = 0, .relu_degree = 15};
  const io::WeightFile weights = nn::ResNet::seeded_weights(config, 11);
  const nn::ResNet direct = nn::ResNet::from_weights(config, weights);
  const nn::ResNet loaded = nn::ResNet::from_weights(config, io::WeightFile::from_bytes(weights.to_bytes()));
  nn::Tensor image(config.input);
  for (std::size_t i = 0; i < image.values.size(); ++i) image.values[i] = static_cast<double>(i % 7) / 7;
  CHECK(direct.reference(image).values == loaded.reference(image).values);
  CHECK(weights.contains("stages.1.0.shortcut.weight"));  // the stride-2 block has its 1x1 shortcut
  CHECK_FALSE(weights.contains("stages.0.0.shortcut.weight"));

  io::WeightFile missing;
  for (const auto& [name, t] : weights.tensors()) {
    if (name != "fc.bias") missing.add(name, t.dims, t.values);
  }
  try {
    nn::ResNet::from_weights(config, missing);
    FAIL("a weight file without fc.bias was accepted");
  } catch (const MismatchError& e) {
    CHECK(std::string(e.what()).find("fc.bias") != std::string::npos);
  }
  nn::ResNetConfig wider = config;
  wider.channels = {2, 8};  // the file's tensors are for 4 channels
  CHECK_THROWS_AS(nn::ResNet::from_weights(wider, weights), MismatchError);
}

TEST_CASE("ResNetConfig chooses the minimax ReLU; its plaintext twin stays within 2^-13 of the exact logits",
          "[nn][resnet][minimax]") {
  auto rng = cerium_test::make_rng(405);
  INFO("test seed " << cerium_test::test_seed());
  nn::ResNetConfig config{.input = {1, 8, 8}, .channels = {2, 4}, .blocks = 1, .classes = 3, .slots = 256,
                          .relu_bound = 1, .relu_minimax_degrees = {15, 15, 27}};
  nn::ResNet model = nn::ResNet::seeded(config, 7);
  std::uniform_real_distribution<double> pixel(0, 1);
  std::vector<nn::Tensor> images;
  for (int i = 0; i < 4; ++i) {
    nn::Tensor t(config.input);
    for (auto& v : t.values) v = pixel(rng);
    images.push_back(t);
  }
  model = model.with_relu_bound(1.25 * model.activation_range(images));
  REQUIRE(model.relu().sign_design().has_value());
  CHECK(model.relu().sign_design()->error < std::exp2(-13));
  CHECK(model.relu().bound() == model.config().relu_bound);  // with_relu_bound designs it again for the new bound
  // Without degrees: the fixed composite, as before.
  nn::ResNetConfig defaults = config;
  defaults.relu_minimax_degrees.clear();
  CHECK_FALSE(nn::ResNet::seeded(defaults, 7).relu().sign_design().has_value());
  for (const nn::Tensor& image : images) {
    graph::PlainOps plain;
    const auto packed = model.input_packing().pack(image);
    const nn::Tensor twin = logits(model, model.forward(plain, graph::PlainOps::Value(packed.begin(), packed.end())));
    const nn::Tensor exact = model.reference(image);
    for (std::size_t k = 0; k < config.classes; ++k) {
      INFO("logit " << k << ": twin " << twin.values[k] << ", exact " << exact.values[k]);
      CHECK(std::abs(twin.values[k] - exact.values[k]) < std::exp2(-13));  // measured about 2^-15
    }
  }
}
