#pragma once
// Argument checks shared by the non-linear layers' sources.

#include <cmath>

#include "cerium/core/check.hpp"

namespace cerium::nn::nonlinear_checks {

inline void require_range(const char* layer, double lower, double upper, bool positive) {
  require(std::isfinite(lower) && std::isfinite(upper) && lower < upper,
          "{}: the range [{}, {}] is empty or not finite; need lower < upper", layer, lower, upper);
  if (positive) require(lower > 0, "{}: the range [{}, {}] must lie above 0 (lower > 0)", layer, lower, upper);
}

inline void require_tolerance(const char* layer, double tolerance) {
  require(std::isfinite(tolerance) && tolerance > 0, "{}: the tolerance {} must be positive", layer, tolerance);
}

}  // namespace cerium::nn::nonlinear_checks
