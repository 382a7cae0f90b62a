#include "cerium/nn/resnet.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "cerium/core/check.hpp"

namespace cerium::nn {
namespace {

using Dims = std::vector<std::uint64_t>;

// The layers' shapes, in the order the network uses them: what seeded_weights draws and from_weights reads.
struct BlockShape {
  std::string prefix;
  std::size_t in_channels, out_channels, stride;
  bool shortcut;
};

std::vector<BlockShape> block_shapes(const ResNetConfig& config) {
  std::vector<BlockShape> out;
  std::size_t channels = config.channels.front();
  for (std::size_t stage = 0; stage < config.channels.size(); ++stage) {
    for (std::size_t b = 0; b < config.blocks; ++b) {
      const std::size_t stride = stage > 0 && b == 0 ? 2 : 1;
      const std::size_t next = config.channels[stage];
      out.push_back({"stages." + std::to_string(stage) + "." + std::to_string(b) + ".", channels, next, stride,
                     stride != 1 || channels != next});
      channels = next;
    }
  }
  return out;
}

BatchNorm read_bn(const io::WeightFile& w, const std::string& prefix, std::size_t channels) {
  const Dims d{channels};
  return BatchNorm{.gamma = w.values(prefix + "gamma", d), .beta = w.values(prefix + "beta", d),
                   .mean = w.values(prefix + "mean", d), .var = w.values(prefix + "var", d)};
}

Conv2d read_conv(const io::WeightFile& w, const std::string& name, const std::string& bn, const Conv2dSpec& spec,
                 const Packing& in) {
  const BatchNorm norm = read_bn(w, bn, spec.out_channels);
  return Conv2d(spec, w.values(name, {spec.out_channels, spec.in_channels, spec.kernel, spec.kernel}), {}, in, &norm);
}

struct Draw {
  std::mt19937_64 rng;
  io::WeightFile file;

  std::vector<double> normal(std::size_t n, double sd) {
    std::normal_distribution<double> d(0.0, sd);
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }
  std::vector<double> uniform(std::size_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }
  void bn(const std::string& prefix, std::size_t c) {
    file.add(prefix + "gamma", {c}, uniform(c, 0.8, 1.2));
    file.add(prefix + "beta", {c}, uniform(c, -0.1, 0.1));
    file.add(prefix + "mean", {c}, uniform(c, -0.1, 0.1));
    file.add(prefix + "var", {c}, uniform(c, 0.8, 1.2));
  }
  // He-normal, times `gain` (residual branches start small so activations stay bounded).
  void conv(const std::string& name, std::size_t out, std::size_t in, std::size_t k, double gain) {
    file.add(name, {out, in, k, k}, normal(out * in * k * k, gain * std::sqrt(2.0 / static_cast<double>(in * k * k))));
  }
};

}  // namespace

io::WeightFile ResNet::seeded_weights(const ResNetConfig& config, std::uint64_t seed) {
  require(!config.channels.empty() && config.blocks >= 1 && config.classes >= 1,
          "resnet: at least one stage, one block and one class");
  Draw draw{std::mt19937_64(seed), {}};
  draw.conv("stem.weight", config.channels[0], config.input.channels, 3, 1.0);
  draw.bn("stem.bn.", config.channels[0]);
  for (const BlockShape& b : block_shapes(config)) {
    draw.conv(b.prefix + "conv1.weight", b.out_channels, b.in_channels, 3, 1.0);
    draw.bn(b.prefix + "bn1.", b.out_channels);
    draw.conv(b.prefix + "conv2.weight", b.out_channels, b.out_channels, 3, 0.5);
    draw.bn(b.prefix + "bn2.", b.out_channels);
    if (b.shortcut) {
      draw.conv(b.prefix + "shortcut.weight", b.out_channels, b.in_channels, 1, 1.0);
      draw.bn(b.prefix + "shortcut_bn.", b.out_channels);
    }
  }
  const std::size_t last = config.channels.back();
  draw.file.add("fc.weight", {config.classes, last}, draw.normal(config.classes * last, std::sqrt(1.0 / static_cast<double>(last))));
  draw.file.add("fc.bias", {config.classes}, draw.normal(config.classes, 0.01));
  return std::move(draw.file);
}

Relu ResNet::make_relu(const ResNetConfig& config) {
  if (!config.relu_minimax_degrees.empty()) {
    return Relu::minimax(config.relu_bound, config.relu_minimax_degrees, config.relu_minimax_eps);
  }
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

ResNet ResNet::from_weights(const ResNetConfig& config, const io::WeightFile& w) {
  require(!config.channels.empty() && config.blocks >= 1 && config.classes >= 1,
          "resnet: at least one stage, one block and one class");
  const Packing input(config.input, config.slots);
  Conv2d stem = read_conv(w, "stem.weight", "stem.bn.",
                          {.in_channels = config.input.channels, .out_channels = config.channels[0]}, input);
  Packing current = stem.layer().output_packing();
  std::vector<Block> blocks;
  for (const BlockShape& b : block_shapes(config)) {
    Conv2d conv1 = read_conv(w, b.prefix + "conv1.weight", b.prefix + "bn1.",
                             {.in_channels = b.in_channels, .out_channels = b.out_channels, .stride = b.stride}, current);
    const Packing middle = conv1.layer().output_packing();
    Conv2d conv2 = read_conv(w, b.prefix + "conv2.weight", b.prefix + "bn2.",
                             {.in_channels = b.out_channels, .out_channels = b.out_channels}, middle);
    std::optional<Conv2d> shortcut;
    if (b.shortcut) {
      shortcut = read_conv(w, b.prefix + "shortcut.weight", b.prefix + "shortcut_bn.",
                           {.in_channels = b.in_channels, .out_channels = b.out_channels, .kernel = 1,
                            .stride = b.stride, .padding = 0},
                           current);
    }
    current = conv2.layer().output_packing();
    blocks.push_back(Block{std::move(conv1), std::move(conv2), std::move(shortcut)});
  }
  GlobalAveragePool pool(current);
  const Packing pooled = pool.layer().output_packing();
  const std::size_t last = pooled.shape().size();
  Dense fc(config.classes, w.values("fc.weight", {config.classes, last}), w.values("fc.bias", {config.classes}),
           pooled);
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
