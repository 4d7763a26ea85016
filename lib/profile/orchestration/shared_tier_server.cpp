#include "profile/orchestration/shared_tier_server.hpp"

#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "core/error.hpp"
#include "util/local_redis_server.hpp"

namespace refenc::profile {

std::vector<std::string> shared_tier_warnings(const ServiceStats& delta) {
  std::vector<std::string> out;
  const TierStats& t = delta.tier;
  if (t.shared_hits + t.shared_misses + t.shared_errors == 0)
    out.push_back("shared tier not consulted: the service has no shared tier (or every request hit memory)");
  if (t.shared_errors > 0)
    out.push_back(fmt::format("shared tier: {} errors; those lookups went on with the local tiers", t.shared_errors));
  return out;
}

SharedTierServer::SharedTierServer(const CacheSpec& cache, const std::string& tmp_root, const std::string& where) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  run_id_ = fmt::format("{}-{}", static_cast<long>(::getpid()),
                        std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  if (cache.shared.empty()) return;
  if (cache.shared == local_shared_cache) {
    try {
      local_ = std::make_unique<LocalRedisServer>(std::vector<std::string>{}, tmp_root);
    } catch (const Error& e) {
      if (where.empty()) throw;
      throw Error(e.kind(), where + ": \"" + local_shared_cache + "\": " + e.what());
    }
    url_ = local_->url();
  } else {
    url_ = cache.shared;
  }
}

SharedTierServer::~SharedTierServer() = default;

int SharedTierServer::local_port() const noexcept { return local_ ? local_->port() : 0; }

std::string SharedTierServer::description() const {
  if (!active()) return "";
  if (local_)
    return fmt::format(
        "local redis-server on 127.0.0.1:{}, started and stopped by the run (maxmemory 256mb, "
        "allkeys-lru)",
        local_->port());
  return url_;
}

CacheSpec SharedTierServer::for_cell(const CacheSpec& cache, std::size_t cell) const {
  CacheSpec c = cache;
  c.shared_url = url_;
  c.shared_prefix = fmt::format("refenc-profile-{}-c{}", run_id_, cell);
  return c;
}

}  // namespace refenc::profile
