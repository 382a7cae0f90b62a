#include "cerium/ckks/scale.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cerium::ckks {

bool scales_match(double a, double b) {
  return std::abs(a - b) <= std::max(1.0, scale_match_relative * std::max(std::abs(a), std::abs(b)));
}

std::string format_scale(double scale) {
  if (!(scale > 0) || !std::isfinite(scale)) return fmt::format("{}", scale);
  return fmt::format("2^{:.3f} ({:.4g})", std::log2(scale), scale);
}

std::string scale_problem(double scale, double log2_modulus) {
  if (!std::isfinite(scale)) return fmt::format("the scale {} is not finite", scale);
  if (scale < 1) return fmt::format("the scale {} is below 1", scale);
  if (std::log2(scale) >= log2_modulus) {
    return fmt::format("the scale {} is not below the modulus at its level (2^{:.1f})", format_scale(scale),
                       log2_modulus);
  }
  return {};
}

}  // namespace cerium::ckks
