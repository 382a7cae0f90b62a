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

}  // namespace cerium::ckks
