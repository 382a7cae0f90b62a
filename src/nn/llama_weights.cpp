// Llama's configuration checks, the shapes of a layer's tensors, seeded weights, and grouped-query packing.

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "cerium/core/check.hpp"
#include "cerium/nn/llama.hpp"

namespace cerium::nn {
namespace {

// The linear layers of a Llama layer: the name (Hugging Face's, under "layers.{i}."), the member, and the shape.
enum class Size { hidden, kv, ffn };
struct LinearSlot {
  const char* name;
  LinearWeights LlamaLayerWeights::*member;
  Size out, in;
};
constexpr LinearSlot kLinears[] = {
    {"self_attn.q_proj", &LlamaLayerWeights::query, Size::hidden, Size::hidden},
    {"self_attn.k_proj", &LlamaLayerWeights::key, Size::kv, Size::hidden},
    {"self_attn.v_proj", &LlamaLayerWeights::value, Size::kv, Size::hidden},
    {"self_attn.o_proj", &LlamaLayerWeights::output, Size::hidden, Size::hidden},
    {"mlp.gate_proj", &LlamaLayerWeights::gate, Size::ffn, Size::hidden},
    {"mlp.up_proj", &LlamaLayerWeights::up, Size::ffn, Size::hidden},
    {"mlp.down_proj", &LlamaLayerWeights::down, Size::hidden, Size::ffn},
};

std::size_t size_of(Size s, const LlamaConfig& c) {
  switch (s) {
    case Size::kv: return c.kv_heads * c.head_dim();
    case Size::ffn: return c.ffn;
    default: return c.hidden;
  }
}

}  // namespace

void validate(const LlamaConfig& c) {
  require(c.layers >= 1 && c.hidden >= 1 && c.heads >= 1 && c.kv_heads >= 1 && c.ffn >= 1,
          "llama: a configuration with a zero size (layers {}, hidden {}, heads {}, kv_heads {}, ffn {})", c.layers,
          c.hidden, c.heads, c.kv_heads, c.ffn);
  require(c.hidden % c.heads == 0, "llama: hidden {} does not split into {} heads", c.hidden, c.heads);
  require(c.heads % c.kv_heads == 0, "llama: {} heads do not share {} key-value heads evenly", c.heads, c.kv_heads);
  require(c.head_dim() % 2 == 0, "llama: head_dim {} (hidden {} / heads {}) is odd; RoPE turns pairs", c.head_dim(),
          c.hidden, c.heads);
  require(c.rms_norm_eps > 0 && std::isfinite(c.rms_norm_eps), "llama: rms_norm_eps {} is not positive and finite",
          c.rms_norm_eps);
  require(c.rope_theta > 0 && std::isfinite(c.rope_theta), "llama: rope_theta {} is not positive and finite",
          c.rope_theta);
}

void check_shapes(const LlamaLayerWeights& w, const LlamaConfig& config) {
  for (const auto& [name, gamma] : {std::pair{"input_layernorm", &w.input_norm},
                                    std::pair{"post_attention_layernorm", &w.post_attention_norm}}) {
    require<MismatchError>(gamma->size() == config.hidden, "llama: {}.weight has {} values, not hidden {}", name,
                           gamma->size(), config.hidden);
  }
  for (const LinearSlot& s : kLinears) {
    const LinearWeights& l = w.*s.member;
    const std::size_t out = size_of(s.out, config), in = size_of(s.in, config);
    require<MismatchError>(l.weight.rows == out && l.weight.cols == in && l.weight.values.size() == out * in,
                           "llama: {}.weight is {} x {} ({} values), not {} x {}", s.name, l.weight.rows,
                           l.weight.cols, l.weight.values.size(), out, in);
    require<MismatchError>(l.bias.empty() || l.bias.size() == out, "llama: {}.bias has {} values, not 0 or {}", s.name,
                           l.bias.size(), out);
  }
}

LlamaLayerWeights LlamaWeights::seeded_layer(const LlamaConfig& config, std::uint64_t seed, std::size_t layer) {
  validate(config);
  require(layer < config.layers, "llama: layer {} of a {}-layer configuration", layer, config.layers);
  // A stream per (seed, layer), so that one layer is drawn without the ones before it.
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(layer), static_cast<std::uint32_t>(std::uint64_t{layer} >> 32)};
  std::mt19937_64 rng(sequence);
  const auto normal = [&rng](std::size_t n, double mean) {
    std::normal_distribution<double> d(mean, 0.02);  // Llama's initializer_range
    std::vector<double> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  };
  LlamaLayerWeights w;
  w.input_norm = normal(config.hidden, 1);
  w.post_attention_norm = normal(config.hidden, 1);
  for (const LinearSlot& s : kLinears) {
    const std::size_t rows = size_of(s.out, config), cols = size_of(s.in, config);
    w.*s.member = LinearWeights{Matrix{rows, cols, normal(rows * cols, 0)}, {}};
  }
  return w;
}

LlamaWeights LlamaWeights::seeded(const LlamaConfig& config, std::uint64_t seed) {
  validate(config);
  LlamaWeights out{config, {}};
  out.layers.reserve(config.layers);
  for (std::size_t i = 0; i < config.layers; ++i) out.layers.push_back(seeded_layer(config, seed, i));
  return out;
}

LinearWeights repeat_kv_heads(const LinearWeights& kv, const LlamaConfig& config) {
  validate(config);
  const std::size_t d = config.head_dim(), group = config.heads / config.kv_heads;
  const Matrix& w = kv.weight;
  require<MismatchError>(w.rows == config.kv_heads * d && w.cols == config.hidden &&
                             w.values.size() == w.rows * w.cols && (kv.bias.empty() || kv.bias.size() == w.rows),
                         "llama: repeating a projection of {} x {} (bias {}); it should be {} key-value heads of {} "
                         "by hidden {}",
                         w.rows, w.cols, kv.bias.size(), config.kv_heads, d, config.hidden);
  LinearWeights out{Matrix::zeros(config.heads * d, w.cols), {}};
  if (!kv.bias.empty()) out.bias.resize(config.heads * d);
  for (std::size_t h = 0; h < config.heads; ++h) {
    const std::size_t from = (h / group) * d;  // the key-value head that query head h reads
    for (std::size_t r = 0; r < d; ++r) {
      std::copy_n(w.values.begin() + (from + r) * w.cols, w.cols, out.weight.values.begin() + (h * d + r) * w.cols);
      if (!kv.bias.empty()) out.bias[h * d + r] = kv.bias[from + r];
    }
  }
  return out;
}

}  // namespace cerium::nn
