#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

namespace refenc::log {
namespace {
std::atomic<Level> g_level{Level::warn};
std::function<void(Level, std::string_view)> g_sink;
std::mutex g_mutex;

const char* name(Level l) {
  switch (l) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warn: return "warning";
    case Level::error: return "error";
    default: return "";
  }
}
}  // namespace

void set_level(Level level) noexcept { g_level.store(level, std::memory_order_relaxed); }
Level level() noexcept { return g_level.load(std::memory_order_relaxed); }

void set_sink(std::function<void(Level, std::string_view)> sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
}

void write(Level l, std::string_view message) {
  if (l < level()) return;
  std::lock_guard lock(g_mutex);
  if (g_sink) {
    g_sink(l, message);
    return;
  }
  std::string line = "refenc: ";
  line += name(l);
  line += ": ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace refenc::log
