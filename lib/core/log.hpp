// Minimal leveled logging to a replaceable sink (stderr by default).
//
// Library code logs rarely: warnings a user should see once (a disabled disk tier, an artifact too
// large to cache) and debug detail the CLI shows with --verbose.
//
//   refenc::log::set_level(refenc::log::Level::debug);
//   refenc::log::warn("disk tier disabled: {} is read-only");   // already formatted by the caller
#pragma once

#include <functional>
#include <string_view>

namespace refenc::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

/// Messages below this level are dropped (default: warn).
void set_level(Level level) noexcept;
Level level() noexcept;

/// Replaces the sink (default writes "refenc: <level>: <message>\n" to stderr). Not thread-safe with
/// concurrent logging: set it once at start-up. An empty function restores the default.
void set_sink(std::function<void(Level, std::string_view)> sink);

void write(Level level, std::string_view message);
inline void debug(std::string_view m) { write(Level::debug, m); }
inline void info(std::string_view m) { write(Level::info, m); }
inline void warn(std::string_view m) { write(Level::warn, m); }
inline void error(std::string_view m) { write(Level::error, m); }

}  // namespace refenc::log
