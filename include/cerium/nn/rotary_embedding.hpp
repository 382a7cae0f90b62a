#pragma once
// Rotary position embedding (RoPE, Llama's; Hugging Face's rotate-half convention) on token-major rows
// (nn/row_layout.hpp): within each head of width d, feature i < d / 2 and feature i + d / 2 form a pair turned by
// the angle p theta^(-2i / d) at token position p:
//   y_i = x_i cos - x_(i + d/2) sin        y_(i + d/2) = x_(i + d/2) cos + x_i sin
// On slots that is x C + R^(d/2)(x) S- + R^(-d/2)(x) S+, with C, S- and S+ masks of the rows' positions (each
// block of rows its own, since its tokens sit at other positions): two rotations and one level. What a rotation
// carries across a head's edge lands where its mask is 0.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/graph/node.hpp"
#include "cerium/nn/row_layout.hpp"

namespace cerium::nn {

// Which heads turn, and at which token positions.
struct RotaryConfig {
  std::size_t heads = 1;          // layout.features = heads x head width (even)
  double theta = 500000;          // Llama 3's base
  std::size_t blocks = 1;         // ciphertexts of rows: row r of block b is token b * layout.rows + r
  std::size_t first_position = 0;  // of token 0 (a prefix already processed)
};

// RoPE on the rows of one or more blocks, its cos and sin masks made once per block.
class RotaryEmbedding {
 public:
  // InvalidArgument for an odd head width, heads that do not divide the features, no blocks or theta <= 0.
  RotaryEmbedding(const RowLayout& layout, const RotaryConfig& config) : layout_(layout), config_(config) {
    layout_.validate();
    require(config.heads >= 1 && layout.features % config.heads == 0 && (layout.features / config.heads) % 2 == 0,
            "rotary embedding: {} features in {} heads (an even head width is needed)", layout.features,
            config.heads);
    require(config.blocks >= 1 && config.theta > 0, "rotary embedding: {} blocks, theta {}", config.blocks,
            config.theta);
    const std::size_t d = head_width(), half = d / 2;
    for (std::size_t b = 0; b < config.blocks; ++b) {
      std::vector<double> c(layout.slots(), 0.0), minus(layout.slots(), 0.0), plus(layout.slots(), 0.0);
      for (std::size_t r = 0; r < layout.rows; ++r) {
        const double p = static_cast<double>(position(b, r));
        for (std::size_t h = 0; h < config.heads; ++h) {
          for (std::size_t i = 0; i < half; ++i) {
            const double angle = p * std::pow(config.theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const std::size_t low = layout.slot(r, h * d + i), high = low + half;
            c[low] = c[high] = std::cos(angle);
            minus[low] = -std::sin(angle);
            plus[high] = std::sin(angle);
          }
        }
      }
      masks_.push_back({graph::PlainVector(c), graph::PlainVector(minus), graph::PlainVector(plus)});
    }
  }

  // The head width d; the position of a block's row (first_position + block * rows + row); the layout and the
  // config it was built from.
  std::size_t head_width() const { return layout_.features / config_.heads; }
  std::size_t position(std::size_t block, std::size_t row) const {
    return config_.first_position + block * layout_.rows + row;
  }
  const RowLayout& layout() const { return layout_; }
  const RotaryConfig& config() const { return config_; }

  // x: the rows of block `block`.
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x, std::size_t block) const {
    require(block < masks_.size(), "rotary embedding: block {} of {}", block, masks_.size());
    return apply(ops, x, masks_[block]);
  }
  // The same with output feature f times feature_mask[f] (layout.features values), in the same level: the mask
  // folded into RoPE's own (attention's query parts).
  template <class Ops>
  typename Ops::Value forward(Ops& ops, const typename Ops::Value& x, std::size_t block,
                              const std::vector<double>& feature_mask) const {
    require(block < masks_.size() && feature_mask.size() == layout_.features,
            "rotary embedding: block {} of {}, a mask of {} values for {} features", block, masks_.size(),
            feature_mask.size(), layout_.features);
    const Masks& m = masks_[block];
    const auto masked = [&](const graph::PlainVector& p) {
      graph::PlainVector::Values values = p.expanded(layout_.slots());
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t f = i % layout_.stride;
        values[i] *= f < layout_.features ? feature_mask[f] : 0.0;
      }
      return graph::PlainVector(std::move(values));
    };
    return apply(ops, x, Masks{masked(m.cos), masked(m.sin_minus), masked(m.sin_plus)});
  }

 private:
  struct Masks {
    graph::PlainVector cos, sin_minus, sin_plus;
  };
  template <class Ops>
  typename Ops::Value apply(Ops& ops, const typename Ops::Value& x, const Masks& m) const {
    const auto half = static_cast<std::int64_t>(head_width() / 2);
    typename Ops::Value y = ops.multiply(x, m.cos);
    y = ops.add(y, ops.multiply(ops.rotate(x, half), m.sin_minus));
    y = ops.add(y, ops.multiply(ops.rotate(x, -half), m.sin_plus));
    ops.label(y, "rope");
    return y;
  }

  RowLayout layout_;
  RotaryConfig config_;
  std::vector<Masks> masks_;
};

}  // namespace cerium::nn
