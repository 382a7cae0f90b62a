#include "cerium/core/log.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace cerium {
namespace {

LogLevel level_from_environment() {
  const char* value = std::getenv("CERIUM_LOG");
  if (value == nullptr) return LogLevel::off;
  return parse_log_level(value).value_or(LogLevel::off);
}

std::atomic<LogLevel>& current_level() {
  static std::atomic<LogLevel> level{level_from_environment()};
  return level;
}

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

LogSink& current_sink() {
  static LogSink sink;
  return sink;
}

}  // namespace

void set_log_level(LogLevel level) { current_level().store(level, std::memory_order_relaxed); }
LogLevel log_level() { return current_level().load(std::memory_order_relaxed); }

std::optional<LogLevel> parse_log_level(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (auto level : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warn, LogLevel::error,
                     LogLevel::off}) {
    if (lower == to_string(level)) return level;
  }
  if (lower == "warning") return LogLevel::warn;
  return std::nullopt;
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "off";
}

LogSink set_log_sink(LogSink sink) {
  std::lock_guard lock(sink_mutex());
  return std::exchange(current_sink(), std::move(sink));
}

namespace detail {
void emit_log(LogLevel level, std::string_view message) {
  std::lock_guard lock(sink_mutex());
  if (current_sink()) {
    current_sink()(level, message);
  } else {
    std::fprintf(stderr, "[cerium %.*s] %.*s\n", static_cast<int>(to_string(level).size()), to_string(level).data(),
                 static_cast<int>(message.size()), message.data());
  }
}
}  // namespace detail

}  // namespace cerium
