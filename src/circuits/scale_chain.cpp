#include "cerium/circuits/scale_chain.hpp"

#include <cmath>

namespace cerium::circuits {

ScaleChain ScaleChain::descending(const std::vector<double>& level_products, int top, double scale) {
  require<LevelError>(top >= 0 && static_cast<std::size_t>(top) < level_products.size(),
                      "scale chain: top level {} without its prime products ({} given)", top, level_products.size());
  require(std::isfinite(scale) && scale > 0, "scale chain: scale {} must be finite and positive", scale);
  ScaleChain chain;
  chain.top_ = top;
  chain.bottom_ = 0;
  chain.scales_.assign(static_cast<std::size_t>(top) + 1, 0.0);
  chain.scales_[static_cast<std::size_t>(top)] = scale;
  for (int l = top; l >= 1; --l) {
    const double s = chain.scales_[static_cast<std::size_t>(l)];
    chain.scales_[static_cast<std::size_t>(l) - 1] = s * s / level_products[static_cast<std::size_t>(l)];
  }
  return chain;
}

ScaleChain ScaleChain::ascending(const std::vector<double>& level_products, int bottom, double scale, int top) {
  require<LevelError>(bottom >= 0 && bottom <= top && static_cast<std::size_t>(top) < level_products.size(),
                      "scale chain: levels {}..{} without their prime products ({} given)", bottom, top,
                      level_products.size());
  require(std::isfinite(scale) && scale > 0, "scale chain: scale {} must be finite and positive", scale);
  ScaleChain chain;
  chain.top_ = top;
  chain.bottom_ = bottom;
  chain.scales_.assign(static_cast<std::size_t>(top - bottom) + 1, 0.0);
  chain.scales_[0] = scale;
  for (int l = bottom + 1; l <= top; ++l) {
    const auto i = static_cast<std::size_t>(l - bottom);
    chain.scales_[i] = std::sqrt(chain.scales_[i - 1] * level_products[static_cast<std::size_t>(l)]);
  }
  return chain;
}

ScaleChain ScaleChain::through(const std::vector<double>& level_products, int level, double scale, int top) {
  require<LevelError>(level >= 0 && level <= top, "scale chain: anchor level {} is outside 0..{}", level, top);
  ScaleChain chain = ascending(level_products, level, scale, top);
  const ScaleChain below = descending(level_products, level, scale);
  std::vector<double> scales(below.scales_.begin(), below.scales_.end() - 1);  // levels 0 .. level - 1
  scales.insert(scales.end(), chain.scales_.begin(), chain.scales_.end());
  chain.scales_ = std::move(scales);
  chain.bottom_ = 0;
  return chain;
}

double ScaleChain::at(int level) const {
  require<LevelError>(contains(level), "scale chain: level {} is outside the chain's levels {}..{}", level, bottom_,
                      top_);
  return scales_[static_cast<std::size_t>(level - bottom_)];
}

}  // namespace cerium::circuits
