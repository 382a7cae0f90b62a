#pragma once
// ResNet-20 set up as examples/resnet20.cpp sets it up for its GPU run (scripts/gpu-check.sh's GPU_RESNET_ARGS:
// --weights data/resnet20_fashion_mnist.crwt --relu-bound 16 --relu-degree 31), host side only, for the GPU
// benchmark (bench_resnet20_gpu.cpp):
//  - weights: the trained file CERIUM_DATA_DIR/resnet20_fashion_mnist.crwt with the interpolated ReLU of degree 31
//    on [-16, 16]; when the file is absent, seeded weights (seed 1) with the same degree and the ReLU's range
//    calibrated on the image (1.25 x its largest ReLU input), as the example does for seeded weights;
//  - the image: Fashion-MNIST test image 0 (padded to 32x32, three channels) when the test set is found
//    (CERIUM_FASHION_MNIST_DIR, else the Debian package's directory), else seeded random pixels;
//  - the traced and planned program (N = 2^16, 16384 slots, bootstrappable_n16), the bootstrapper's configuration
//    (message bound from graph::required_message_bound, as examples/run_planned.hpp), the plaintext twin's logits;
//  - LayerTimes: the per-layer rows of a profiled run, grouped by the model's layer labels with the rule of
//    examples/layer_profile.hpp (whose rows are private to its table, so the rule is restated here).

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/ckks/context.hpp"
#include "cerium/graph/executor.hpp"
#include "cerium/graph/plain_ops.hpp"
#include "cerium/graph/planner.hpp"
#include "cerium/graph/program.hpp"
#include "cerium/graph/tracer.hpp"
#include "cerium/io/idx.hpp"
#include "cerium/io/weights.hpp"
#include "cerium/nn/resnet.hpp"

#ifndef CERIUM_DATA_DIR
#error "CERIUM_DATA_DIR (the repository's data/ folder) must be defined by the build (bench/CMakeLists.txt)"
#endif

namespace cerium_bench::resnet20 {

inline constexpr std::size_t kSlots = 16384;  // 16 x 32 x 32, the widest activation
inline constexpr int kReluDegree = 31;
inline constexpr double kTrainedReluBound = 16;
inline constexpr std::uint64_t kSeed = 1;

inline std::filesystem::path trained_weights_path() {
  return std::filesystem::path(CERIUM_DATA_DIR) / "resnet20_fashion_mnist.crwt";
}

inline std::size_t arg_max(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < v.size(); ++k) best = v[k] > v[best] ? k : best;
  return best;
}

// The image to classify: Fashion-MNIST test image 0 with its label, or random pixels (label -1).
struct Sample {
  cerium::nn::Tensor image;
  int label = -1;
  bool fashion_mnist = false;
};

inline Sample load_sample(const cerium::nn::Shape& shape) {
  const char* data_dir = std::getenv("CERIUM_FASHION_MNIST_DIR");  // else the Debian package's
  const std::filesystem::path dir = data_dir != nullptr ? data_dir : cerium::io::kFashionMnistDir;
  Sample s{cerium::nn::Tensor(shape), -1, false};
  if (std::filesystem::exists(dir / "t10k-images-idx3-ubyte.gz")) {
    const cerium::io::LabeledImages test = cerium::io::load_fashion_mnist("t10k", dir);
    for (std::size_t c = 0; c < 3; ++c) {  // 28x28 grey, padded by 2, copied to the three channels
      for (std::size_t y = 0; y < 28; ++y) {
        for (std::size_t x = 0; x < 28; ++x) s.image.at(c, y + 2, x + 2) = test.pixels[y * 28 + x] / 255.0;
      }
    }
    s.label = static_cast<int>(test.labels[0]);
    s.fashion_mnist = true;
  } else {
    std::mt19937_64 rng(kSeed + 1);
    std::uniform_real_distribution<double> pixel(0, 1);
    for (auto& v : s.image.values) v = pixel(rng);
  }
  return s;
}

// The trained model when its weight file exists, else seeded weights with the ReLU's range calibrated on `image`.
inline cerium::nn::ResNet load_model(const cerium::nn::Tensor& image, bool& trained) {
  using namespace cerium;
  const std::filesystem::path path = trained_weights_path();
  trained = std::filesystem::exists(path);
  nn::ResNetConfig config{.slots = kSlots,
                          .relu_bound = kTrainedReluBound,
                          .relu_stages = 0,
                          .relu_degree = kReluDegree};
  if (trained) return nn::ResNet::from_weights(config, io::WeightFile::load(path));
  const nn::ResNet seeded = nn::ResNet::seeded(config, kSeed);
  return seeded.with_relu_bound(1.25 * seeded.activation_range({image}));
}

// Traced and planned with the example's options: bootstraps placed for a bootstrapper at 16384 slots.
inline cerium::graph::Plan plan_model(const cerium::nn::ResNet& model, const cerium::ckks::ContextPtr& context) {
  using namespace cerium;
  const auto levels = boot::bootstrap_levels(context->parameters(), boot::BootstrapConfig{.slots = kSlots});
  graph::PlanOptions options;
  options.bootstrap = graph::BootstrapSpec{.output_level = levels.output,
                                           .output_scale = context->parameters().default_scale_at(levels.output),
                                           .min_input_level = 1,
                                           .slots = kSlots};
  graph::Tracer tracer(context);
  tracer.output(model.forward(tracer, tracer.input("image", kSlots)), "logits");
  return graph::plan(std::move(tracer).finish(), options);
}

// The bootstrapper for the plan (examples/run_planned.hpp): made for the largest value it bootstraps, both halves
// of the 2 x 16384 slots through one EvalMod (the example's default, --no-join-halves turns it off there).
inline cerium::boot::BootstrapConfig bootstrap_config(const cerium::graph::Plan& plan) {
  cerium::boot::BootstrapConfig config{.slots = kSlots, .join_halves = true};
  config.message_bound = std::max(config.message_bound, cerium::graph::required_message_bound(plan));
  return config;
}

// The logits where the output packing puts them (logit k is not slot k).
inline std::vector<double> logits_of(const cerium::nn::ResNet& model,
                                     const std::vector<std::complex<double>>& slots) {
  std::vector<double> real(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) real[i] = slots[i].real();
  return model.output_packing().unpack(real).values;
}

// The plaintext twin's logits (the same polynomial ReLUs, in doubles): what the ciphertexts should decrypt to.
inline std::vector<double> twin_logits(const cerium::nn::ResNet& model, const cerium::nn::Tensor& image) {
  const auto packed = model.input_packing().pack(image);
  cerium::graph::PlainOps twin;
  return logits_of(model, model.forward(twin, cerium::graph::PlainOps::Value(packed.begin(), packed.end())));
}

// The per-layer times of a profiled run (graph::RunOptions::profile): every node's time goes to the next node the
// model labelled (its layer); layers of the same name add up; an output node alone goes to the layer before it.
class LayerTimes {
 public:
  struct Row {
    std::string name;
    std::size_t nodes = 0;
    int bootstraps = 0;
    double seconds = 0, bootstrap_seconds = 0;
  };

  explicit LayerTimes(const cerium::graph::Program& program) : program_(&program) {}

  void add(const cerium::graph::RunProgress& p) {
    pending_.seconds += p.node_seconds;
    pending_.bootstrap_seconds += p.bootstrap_seconds;
    pending_.bootstraps += p.bootstraps_done - bootstraps_done_;
    bootstraps_done_ = p.bootstraps_done;
    ++pending_.nodes;
    const cerium::graph::Node& node = program_->node(p.node);
    if (node.name.empty() || node.op == cerium::graph::Op::input) return;
    if (node.op == cerium::graph::Op::output && pending_.nodes == 1 && !rows_.empty()) {
      rows_.back().seconds += pending_.seconds;
    } else {
      close(node.name);
    }
    pending_ = {};
  }

  const std::vector<Row>& rows() const { return rows_; }
  double total_seconds() const { return sum(&Row::seconds); }
  double bootstrap_seconds() const { return sum(&Row::bootstrap_seconds); }

 private:
  double sum(double Row::*field) const {
    double total = pending_.*field;
    for (const Row& r : rows_) total += r.*field;
    return total;
  }

  void close(const std::string& name) {
    const auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.name == name; });
    if (it == rows_.end()) {
      pending_.name = name;
      rows_.push_back(pending_);
      return;
    }
    it->nodes += pending_.nodes;
    it->bootstraps += pending_.bootstraps;
    it->seconds += pending_.seconds;
    it->bootstrap_seconds += pending_.bootstrap_seconds;
  }

  const cerium::graph::Program* program_;
  std::vector<Row> rows_;
  Row pending_;
  int bootstraps_done_ = 0;
};

}  // namespace cerium_bench::resnet20
