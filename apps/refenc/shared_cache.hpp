// The `--shared-cache` options that `encode`, `voice` and `cache` share, and the tier they open.
//
//   SharedCacheOptions shared;
//   add_shared_cache_options(app, shared);                  // --shared-cache URL (or $REFENC_SHARED_CACHE) ...
//   std::shared_ptr<store::RedisTier> tier = open_shared_cache(shared);   // null when no URL was given
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "store/redis_tier.hpp"

namespace refenc::cli {

struct SharedCacheOptions {
  std::string url;
  std::string prefix;
  int ttl_s = 0;
  int timeout_ms = 250;
  bool insecure = false;
};

/// Adds --shared-cache, --shared-cache-prefix, --shared-cache-ttl, --shared-cache-timeout and
/// --shared-cache-insecure (each with its environment variable).
void add_shared_cache_options(CLI::App& app, SharedCacheOptions& o);

/// The shared tier the options name, or null when none is named. Throws Error(config) for a bad URL,
/// prefix, or an unauthenticated remote server without --shared-cache-insecure.
std::shared_ptr<store::RedisTier> open_shared_cache(const SharedCacheOptions& o);

}  // namespace refenc::cli
