#include "cerium/nn/resnet.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "cerium/core/check.hpp"

namespace cerium::nn {
namespace {

struct Draw {
  std::mt19937_64 rng;
  std::vector<double> normal(std::size_t n, double sd) {
    std::normal_distribution<double> d(0.0, sd);
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }
  BatchNorm batch_norm(std::size_t channels) {
    std::uniform_real_distribution<double> g(0.8, 1.2), b(-0.1, 0.1), m(-0.1, 0.1), v(0.8, 1.2);
    BatchNorm bn;
    for (std::size_t c = 0; c < channels; ++c) {
      bn.gamma.push_back(g(rng));
      bn.beta.push_back(b(rng));
      bn.mean.push_back(m(rng));
      bn.var.push_back(v(rng));
    }
    return bn;
  }
  // He-normal weights of a convolution, times `gain` (residual branches start small so activations stay bounded).
  Conv2d conv(const Conv2dSpec& spec, const Packing& in, double gain) {
    const double fan_in = static_cast<double>(spec.in_channels * spec.kernel * spec.kernel);
    const BatchNorm bn = batch_norm(spec.out_channels);
    return Conv2d(spec, normal(spec.out_channels * spec.in_channels * spec.kernel * spec.kernel,
                               gain * std::sqrt(2.0 / fan_in)),
                  {}, in, &bn);
  }
};

}  // namespace

Relu ResNet::make_relu(const ResNetConfig& config) {
  return config.relu_stages > 0 ? Relu::composite(config.relu_bound, config.relu_stages)
                                : Relu::interpolated(config.relu_bound, config.relu_degree);
}

ResNet::ResNet(ResNetConfig config, Conv2d stem, std::vector<Block> blocks, GlobalAveragePool pool, Dense fc)
    : config_(std::move(config)),
      stem_(std::move(stem)),
      blocks_(std::move(blocks)),
      pool_(std::move(pool)),
      fc_(std::move(fc)),
      relu_(make_relu(config_)) {}

ResNet ResNet::seeded(const ResNetConfig& config, std::uint64_t seed) {
  require(!config.channels.empty() && config.blocks >= 1 && config.classes >= 1,
          "resnet: at least one stage, one block and one class");
  Draw draw{std::mt19937_64(seed)};
  const Packing input(config.input, config.slots);
  Conv2d stem = draw.conv({.in_channels = config.input.channels, .out_channels = config.channels[0]}, input, 1.0);
  Packing current = stem.layer().output_packing();
  std::vector<Block> blocks;
  for (std::size_t stage = 0; stage < config.channels.size(); ++stage) {
    for (std::size_t b = 0; b < config.blocks; ++b) {
      const std::size_t in_channels = current.shape().channels, out_channels = config.channels[stage];
      const std::size_t stride = stage > 0 && b == 0 ? 2 : 1;
      Conv2d conv1 = draw.conv({.in_channels = in_channels, .out_channels = out_channels, .stride = stride}, current,
                               1.0);
      const Packing middle = conv1.layer().output_packing();
      Conv2d conv2 = draw.conv({.in_channels = out_channels, .out_channels = out_channels}, middle, 0.5);
      std::optional<Conv2d> shortcut;
      if (stride != 1 || in_channels != out_channels) {
        shortcut = draw.conv({.in_channels = in_channels, .out_channels = out_channels, .kernel = 1, .stride = stride,
                              .padding = 0},
                             current, 1.0);
      }
      current = conv2.layer().output_packing();
      blocks.push_back(Block{std::move(conv1), std::move(conv2), std::move(shortcut)});
    }
  }
  GlobalAveragePool pool(current);
  const Packing pooled = pool.layer().output_packing();
  Dense fc(config.classes, draw.normal(config.classes * pooled.shape().size(), std::sqrt(1.0 / static_cast<double>(pooled.shape().size()))),
           draw.normal(config.classes, 0.01), pooled);
  return ResNet(config, std::move(stem), std::move(blocks), std::move(pool), std::move(fc));
}

Tensor ResNet::run_reference(const Tensor& x, double* range) const {
  std::size_t relu_index = 0;
  const auto relu = [&](Tensor t) {
    const std::string where = "ReLU " + std::to_string(relu_index++);
    if (range != nullptr) {
      for (const double v : t.values) *range = std::max(*range, std::abs(v));
      for (auto& v : t.values) v = std::max(v, 0.0);
      return t;
    }
    return relu_.reference(t, where);
  };
  const auto add = [](Tensor a, const Tensor& b) {
    for (std::size_t i = 0; i < a.values.size(); ++i) a.values[i] += b.values[i];
    return a;
  };
  Tensor y = relu(stem_.reference(x));
  for (const Block& b : blocks_) {
    const Tensor h = b.conv2.reference(relu(b.conv1.reference(y)));
    y = relu(add(h, b.shortcut ? b.shortcut->reference(y) : y));
  }
  return fc_.reference(pool_.reference(y));
}

Tensor ResNet::reference(const Tensor& x) const { return run_reference(x, nullptr); }

double ResNet::activation_range(const std::vector<Tensor>& inputs) const {
  double range = 0;
  for (const Tensor& x : inputs) run_reference(x, &range);
  return range;
}

ResNet ResNet::with_relu_bound(double bound) const {
  ResNet copy = *this;
  copy.config_.relu_bound = bound;
  copy.relu_ = make_relu(copy.config_);
  return copy;
}

}  // namespace cerium::nn
