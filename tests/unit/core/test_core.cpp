#include <cstdlib>
#include <string>
#include <vector>

#include "cerium/core/check.hpp"
#include "cerium/core/error.hpp"
#include "cerium/core/log.hpp"
#include "cerium/core/progress.hpp"
#include "cerium/version.hpp"
#include "support/catch.hpp"

using namespace cerium;

TEST_CASE("errors form a hierarchy under cerium::Error", "[core][error]") {
  REQUIRE_THROWS_AS(throw OutOfMemoryError("x"), DeviceError);
  REQUIRE_THROWS_AS(throw OutOfMemoryError("x"), Error);
  REQUIRE_THROWS_AS(throw SecurityError("x"), ParameterError);
  REQUIRE_THROWS_AS(throw MissingKeyError("x"), std::runtime_error);
}

TEST_CASE("require throws the requested type with a formatted message", "[core][error]") {
  REQUIRE_NOTHROW(require(true, "never {}", 1));
  try {
    require<LevelError>(false, "level {} is below {}", 1, 2);
    FAIL("no throw");
  } catch (const LevelError& e) {
    REQUIRE(std::string(e.what()) == "level 1 is below 2");
  }
}

TEST_CASE("logging is silent by default and follows the level", "[core][log]") {
  std::vector<std::string> seen;
  const auto previous_sink = set_log_sink([&](LogLevel, std::string_view m) { seen.emplace_back(m); });
  const auto previous_level = log_level();
  if (std::getenv("CERIUM_LOG") == nullptr) REQUIRE(previous_level == LogLevel::off);

  set_log_level(LogLevel::off);
  log(LogLevel::error, "dropped {}", 1);
  REQUIRE(seen.empty());
  set_log_level(LogLevel::warn);
  log(LogLevel::info, "dropped {}", 2);
  log(LogLevel::warn, "kept {}", 3);
  log(LogLevel::error, "kept {}", 4);
  REQUIRE(seen == std::vector<std::string>{"kept 3", "kept 4"});

  set_log_level(previous_level);
  set_log_sink(previous_sink);
}

TEST_CASE("log level names parse", "[core][log]") {
  REQUIRE(parse_log_level("DEBUG") == LogLevel::debug);
  REQUIRE(parse_log_level("warning") == LogLevel::warn);
  REQUIRE(parse_log_level("off") == LogLevel::off);
  REQUIRE_FALSE(parse_log_level("loud").has_value());
}

TEST_CASE("progress reporter reports every step", "[core][progress]") {
  std::vector<double> fractions;
  ProgressReporter reporter([&](const ProgressEvent& e) { fractions.push_back(e.fraction()); }, "keys", 4);
  for (int i = 0; i < 4; ++i) reporter.advance();
  REQUIRE(fractions == std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0});
  ProgressReporter silent({}, "nothing", 2);  // an empty callback is allowed
  silent.advance(2);
  REQUIRE(silent.done() == 2);
}

TEST_CASE("the generated version header matches the project version", "[core][version]") {
  REQUIRE(std::string(version_string) ==
          std::to_string(version_major) + "." + std::to_string(version_minor) + "." + std::to_string(version_patch));
}
