#pragma once
// Logging: silent by default. The level comes from set_log_level() or, at first use, from the environment
// variable CERIUM_LOG (trace, debug, info, warn, error, off). Messages go to a sink (stderr by default).

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <string_view>
#include <utility>

namespace cerium {

// Message levels, least severe first; `off` silences every message.
enum class LogLevel { trace = 0, debug, info, warn, error, off };

// The level below which messages are dropped: set, or read (from CERIUM_LOG at first use).
void set_log_level(LogLevel level);
LogLevel log_level();
// Parses a level name ("debug", "WARN", ...); nullopt for an unknown name.
std::optional<LogLevel> parse_log_level(std::string_view name);
// The level's name, as parse_log_level reads it.
std::string_view to_string(LogLevel level);

// Where messages go: each one with its level, already formatted.
using LogSink = std::function<void(LogLevel, std::string_view)>;
// Replaces the sink (nullptr restores stderr). Returns the previous one.
LogSink set_log_sink(LogSink sink);

namespace detail {
void emit_log(LogLevel level, std::string_view message);
}

// Whether a message of this level would be emitted: lets callers skip building costly arguments.
inline bool log_enabled(LogLevel level) { return level >= log_level() && level != LogLevel::off; }

// Formats (fmt syntax) and emits a message when its level is enabled; otherwise formats nothing.
template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) detail::emit_log(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cerium
