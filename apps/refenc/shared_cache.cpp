#include "shared_cache.hpp"

namespace refenc::cli {

void add_shared_cache_options(CLI::App& app, SharedCacheOptions& o) {
  app.add_option("--shared-cache", o.url,
                 "Redis shared by replicas: redis://[user@]host[:port][/db] (password: $REFENC_SHARED_CACHE_PASSWORD)")
      ->envname(store::kSharedCacheEnv);
  app.add_option("--shared-cache-prefix", o.prefix, "Deployment prefix of the shared cache's keys")
      ->envname("REFENC_SHARED_CACHE_PREFIX");
  app.add_option("--shared-cache-ttl", o.ttl_s,
                 "Expiry of shared values in seconds (0: none, the server's LRU bounds them)")
      ->envname("REFENC_SHARED_CACHE_TTL")
      ->check(CLI::Range(0, 1 << 30));
  app.add_option("--shared-cache-timeout", o.timeout_ms, "Connect and command timeout of the shared cache, ms")
      ->envname("REFENC_SHARED_CACHE_TIMEOUT_MS")
      ->check(CLI::Range(1, 60'000))
      ->capture_default_str();
  app.add_flag("--shared-cache-insecure", o.insecure, "Allow a shared cache on another host without a password");
}

std::shared_ptr<store::RedisTier> open_shared_cache(const SharedCacheOptions& o) {
  if (o.url.empty()) return nullptr;
  store::RedisTierOptions t;
  t.url = o.url;
  t.prefix = o.prefix;
  t.ttl = std::chrono::seconds(o.ttl_s);
  t.connect_timeout = std::chrono::milliseconds(o.timeout_ms);
  t.command_timeout = std::chrono::milliseconds(o.timeout_ms);
  t.allow_insecure = o.insecure;
  return store::open_redis_tier(std::move(t));
}

}  // namespace refenc::cli
