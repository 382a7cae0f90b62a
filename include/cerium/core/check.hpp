#pragma once
// Argument checks that throw typed errors with formatted messages.

#include <fmt/format.h>

#include <utility>

#include "cerium/core/error.hpp"

namespace cerium {

// Throws ErrorType with a formatted message when cond is false.
template <class ErrorType = InvalidArgument, class... Args>
void require(bool cond, fmt::format_string<Args...> format, Args&&... args) {
  if (!cond) throw ErrorType(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cerium
