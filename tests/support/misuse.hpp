#pragma once
// Checks for the misuse tests ("[misuse]"): a call with out-of-range or inconsistent arguments must either succeed
// or throw the cerium::Error subclass of its kind (core/error.hpp), with a message that names the bad value. Any
// other exception (std::out_of_range from an .at(), std::length_error from a size, ...) escaped the public API's
// checks: the test fails naming the call, the exception's type and its message.

#include <cstddef>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "cerium/core/error.hpp"
#include "support/catch.hpp"

namespace cerium_test {

// How a call ended.
enum class Outcome { succeeded, threw_expected };

// Runs f. It may succeed when allow_success; otherwise it must throw Expected. A cerium::Error of another class,
// or a message that lacks `mention` (when given), fails the test.
template <class Expected, class F>
Outcome check_misuse(std::string_view call, F&& f, std::string_view mention = {}, bool allow_success = false) {
  INFO("call: " << call);
  try {
    f();
  } catch (const cerium::Error& e) {
    const std::string message = e.what();
    INFO("threw " << typeid(e).name() << ": " << message);
    CHECK(dynamic_cast<const Expected*>(&e) != nullptr);  // the class of this kind of problem
    CHECK(!message.empty());
    if (!mention.empty()) CHECK(message.find(mention) != std::string::npos);
    return Outcome::threw_expected;
  } catch (const std::exception& e) {
    FAIL("a standard-library exception escaped the public API: " << call << " threw " << typeid(e).name() << ": "
                                                                  << e.what());
  } catch (...) {
    FAIL("a non-standard exception escaped the public API: " << call);
  }
  if (!allow_success) FAIL(call << " succeeded; it should have thrown " << typeid(Expected).name());
  return Outcome::succeeded;
}

// The call must throw Expected.
template <class Expected, class F>
void require_error(std::string_view call, F&& f, std::string_view mention = {}) {
  check_misuse<Expected>(call, std::forward<F>(f), mention, false);
}

// The call may succeed; if it throws, it throws Expected.
template <class Expected, class F>
Outcome succeed_or_error(std::string_view call, F&& f, std::string_view mention = {}) {
  return check_misuse<Expected>(call, std::forward<F>(f), mention, true);
}

// One of the choices, drawn uniformly (the misuse tests' random arguments).
template <class T>
T pick(std::mt19937_64& rng, const std::vector<T>& choices) {
  return choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(rng)];
}

}  // namespace cerium_test
