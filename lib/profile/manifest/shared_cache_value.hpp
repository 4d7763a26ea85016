// The value of a manifest's `cache.shared`, checked without connecting anywhere: "local" (a private
// redis-server the run starts on loopback) or a redis:// URL that holds no password (the manifest is
// copied into report.json). Kept apart from the server it names so the manifest parser (and its fuzz
// target) needs nothing but the standard library for it.
//
//   std::string why = refenc::profile::shared_cache_problem("redis://u:pw@10.0.0.5");  // "no password in ..."
//   bool ok = refenc::profile::shared_cache_problem("local").empty();                  // true
#pragma once

#include <string>

namespace refenc::profile {

/// CacheSpec::shared's value that starts a private redis-server on loopback for the run.
inline constexpr const char* local_shared_cache = "local";

/// Why `value` cannot be a manifest's cache.shared, or "" when it can: "local", or
/// redis://[user@]host[:port][/db] with no password (it comes from $REFENC_SHARED_CACHE_PASSWORD).
std::string shared_cache_problem(const std::string& value);

}  // namespace refenc::profile
