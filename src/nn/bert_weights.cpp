// BertWeights: the configuration's checks, the tensors' names and shapes (one table that from_weights reads,
// to_weights writes and check_shapes checks), and seeded weights.

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "cerium/core/check.hpp"
#include "cerium/nn/bert.hpp"

namespace cerium::nn {
namespace {

using Dims = std::vector<std::uint64_t>;

// The linear layers of a BERT layer: the name under "layers.{i}.", the member, and the shape (out x in).
struct LinearSlot {
  const char* name;
  LinearWeights BertLayerWeights::*member;
  bool from_ffn, to_ffn;  // in (resp. out) is the FFN width instead of hidden
};
constexpr LinearSlot kLinears[] = {
    {"attention.query", &BertLayerWeights::query, false, false},
    {"attention.key", &BertLayerWeights::key, false, false},
    {"attention.value", &BertLayerWeights::value, false, false},
    {"attention.output", &BertLayerWeights::attention_output, false, false},
    {"intermediate", &BertLayerWeights::intermediate, false, true},
    {"output", &BertLayerWeights::output, true, false},
};

struct NormSlot {
  const char* name;
  NormWeights BertLayerWeights::*member;
};
constexpr NormSlot kNorms[] = {
    {"attention.norm", &BertLayerWeights::attention_norm},
    {"output.norm", &BertLayerWeights::output_norm},
};

std::size_t out_size(const LinearSlot& s, const BertConfig& c) { return s.to_ffn ? c.ffn : c.hidden; }
std::size_t in_size(const LinearSlot& s, const BertConfig& c) { return s.from_ffn ? c.ffn : c.hidden; }
std::string prefix(std::size_t layer) { return "layers." + std::to_string(layer) + "."; }

}  // namespace

void validate(const BertConfig& config) {
  require(config.layers >= 1 && config.hidden >= 1 && config.heads >= 1 && config.ffn >= 1,
          "bert: layers ({}), hidden ({}), heads ({}) and ffn ({}) must be at least 1", config.layers, config.hidden,
          config.heads, config.ffn);
  require(config.hidden % config.heads == 0, "bert: hidden {} is not divisible by {} heads", config.hidden,
          config.heads);
  require(std::isfinite(config.layer_norm_eps) && config.layer_norm_eps > 0,
          "bert: the LayerNorm epsilon {} is not positive", config.layer_norm_eps);
}

void check_shapes(const BertLayerWeights& weights, const BertConfig& config) {
  for (const LinearSlot& s : kLinears) {
    const LinearWeights& l = weights.*s.member;
    const std::size_t out = out_size(s, config), in = in_size(s, config);
    require<MismatchError>(l.weight.rows == out && l.weight.cols == in && l.weight.values.size() == out * in &&
                               l.bias.size() == out,
                           "bert: {} is {} x {} (bias {}); the configuration makes it {} x {}", s.name, l.weight.rows,
                           l.weight.cols, l.bias.size(), out, in);
  }
  for (const NormSlot& s : kNorms) {
    const NormWeights& n = weights.*s.member;
    require<MismatchError>(n.gamma.size() == config.hidden && n.beta.size() == config.hidden,
                           "bert: {} has gamma {} and beta {}; the configuration makes them {}", s.name,
                           n.gamma.size(), n.beta.size(), config.hidden);
  }
}

BertWeights BertWeights::from_weights(const io::WeightFile& w, const BertConfig& config) {
  validate(config);
  BertWeights out{config, std::vector<BertLayerWeights>(config.layers)};
  for (std::size_t i = 0; i < config.layers; ++i) {
    const std::string p = prefix(i);
    for (const LinearSlot& s : kLinears) {
      const std::size_t rows = out_size(s, config), cols = in_size(s, config);
      LinearWeights& l = out.layers[i].*s.member;
      l.weight = Matrix{rows, cols, w.values(p + s.name + ".weight", Dims{rows, cols})};
      l.bias = w.values(p + s.name + ".bias", Dims{rows});
    }
    for (const NormSlot& s : kNorms) {
      NormWeights& n = out.layers[i].*s.member;
      n.gamma = w.values(p + s.name + ".gamma", Dims{config.hidden});
      n.beta = w.values(p + s.name + ".beta", Dims{config.hidden});
    }
  }
  return out;
}

io::WeightFile BertWeights::to_weights(io::Precision precision) const {
  io::WeightFile file;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    check_shapes(layers[i], config);
    const std::string p = prefix(i);
    for (const LinearSlot& s : kLinears) {
      const LinearWeights& l = layers[i].*s.member;
      file.add(p + s.name + ".weight", {l.weight.rows, l.weight.cols}, l.weight.values, precision);
      file.add(p + s.name + ".bias", {l.bias.size()}, l.bias, precision);
    }
    for (const NormSlot& s : kNorms) {
      const NormWeights& n = layers[i].*s.member;
      file.add(p + s.name + ".gamma", {n.gamma.size()}, n.gamma, precision);
      file.add(p + s.name + ".beta", {n.beta.size()}, n.beta, precision);
    }
  }
  return file;
}

BertWeights BertWeights::seeded(const BertConfig& config, std::uint64_t seed) {
  validate(config);
  std::mt19937_64 rng(seed);
  // BERT's initializer range; a trained model's weights keep about this spread.
  const auto normal = [&rng](std::size_t n, double mean, double sd) {
    std::normal_distribution<double> d(mean, sd);
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  BertWeights out{config, std::vector<BertLayerWeights>(config.layers)};
  for (BertLayerWeights& layer : out.layers) {
    for (const LinearSlot& s : kLinears) {
      const std::size_t rows = out_size(s, config), cols = in_size(s, config);
      layer.*s.member = LinearWeights{Matrix{rows, cols, normal(rows * cols, 0, 0.02)}, normal(rows, 0, 0.02)};
    }
    for (const NormSlot& s : kNorms) {
      layer.*s.member = NormWeights{normal(config.hidden, 1, 0.02), normal(config.hidden, 0, 0.02)};
    }
  }
  return out;
}

}  // namespace cerium::nn
