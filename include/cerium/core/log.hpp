#pragma once
// Logging: silent by default. The level comes from set_log_level() or, at first use, from the environment
// variable CERIUM_LOG (trace, debug, info, warn, error, off). Messages go to a sink (stderr by default).

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string_view>
#include <utility>

namespace cerium {

enum class LogLevel { trace = 0, debug, info, warn, error, off };

void set_log_level(LogLevel level);
LogLevel log_level();
// Parses a level name ("debug", "WARN", ...); nullopt for an unknown name.
std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view to_string(LogLevel level);

using LogSink = std::function<void(LogLevel, std::string_view)>;
// Replaces the sink (nullptr restores stderr). Returns the previous one.
LogSink set_log_sink(LogSink sink);

namespace detail {
void emit_log(LogLevel level, std::string_view message);
}

inline bool log_enabled(LogLevel level) { return level >= log_level() && level != LogLevel::off; }

template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) detail::emit_log(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cerium
