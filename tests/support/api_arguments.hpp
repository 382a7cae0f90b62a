#pragma once
// The argument tests' harness ("[api_arguments]"): random out-of-range arguments to the public API, each call either
// succeeding or throwing a cerium::Error whose message is non-empty and names the call; a standard-library (or any
// other) exception escaped the API's checks and fails the test naming the call and its arguments.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "cerium/core/error.hpp"
#include "support/catch.hpp"

namespace cerium_test {

inline constexpr int int_min = std::numeric_limits<int>::min();
inline constexpr int int_max = std::numeric_limits<int>::max();
inline constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
inline constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
inline constexpr double infinity = std::numeric_limits<double>::infinity();

// How the calls of a test ended.
struct Tally {
  int succeeded = 0;
  int typed = 0;  // threw a cerium::Error
};

// Whether the message contains one of the '|'-separated names (all messages do for no names).
inline bool names_one_of(const std::string& message, std::string_view names) {
  if (names.empty()) return true;
  while (true) {
    const std::size_t bar = names.find('|');
    if (message.find(names.substr(0, bar)) != std::string::npos) return true;
    if (bar == std::string_view::npos) return false;
    names.remove_prefix(bar + 1);
  }
}

// Runs f: it may succeed, or throw a cerium::Error (of class Expected) whose message is non-empty and names the
// call (one of `names`, '|'-separated, when given). Anything else fails the test naming the call. Returns whether
// f succeeded.
template <class Expected = cerium::Error, class F>
bool attempt(Tally& tally, const std::string& call, std::string_view names, F&& f) {
  try {
    f();
    ++tally.succeeded;
    return true;
  } catch (const cerium::Error& e) {
    ++tally.typed;
    const std::string message = e.what();
    if (dynamic_cast<const Expected*>(&e) == nullptr) {
      FAIL_CHECK(call << " threw " << typeid(e).name() << " where " << typeid(Expected).name()
                      << " was expected: " << message);
    }
    if (message.empty()) FAIL_CHECK(call << " threw " << typeid(e).name() << " with an empty message");
    if (!names_one_of(message, names)) {
      FAIL_CHECK(call << " threw " << typeid(e).name() << " whose message does not name `" << names
                      << "`: " << message);
    }
    return false;
  } catch (const std::exception& e) {
    FAIL_CHECK("a standard-library exception escaped the public API: " << call << " threw " << typeid(e).name() << ": "
                                                                       << e.what());
  } catch (...) {
    FAIL_CHECK("a non-standard exception escaped the public API: " << call);
  }
  return false;
}

inline std::string show(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace cerium_test
