// SharedTierServer: the Redis server a profile run's warm-shared cells share, and each cell's key prefix.
//
// A manifest's `cache.shared` names it: "local" starts a private redis-server on a free loopback port
// in a temporary folder (LocalRedisServer) that lives as long as this object, so it is stopped when
// the run ends, fails or is interrupted; a redis:// URL names a server someone else runs. The profiler
// never connects anywhere else: without `cache.shared` there is no shared tier, and the
// $REFENC_SHARED_CACHE of the CLI's other commands is not read. Each warm-shared cell gets a key prefix
// of its own (run and cell), so a cell sees only what its replica A wrote, never an earlier cell's or
// run's values.
//
//   refenc::profile::CacheSpec cache;
//   cache.shared = "local";
//   refenc::profile::SharedTierServer server(cache, "");   // starts redis-server (Error(config) without it)
//   refenc::profile::CacheSpec cell = server.for_cell(cache, 3);  // cell.shared_url, cell.shared_prefix
//   std::string context = server.description();            // "local redis-server on 127.0.0.1:PORT ..."
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/service_stats.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/manifest/shared_cache_value.hpp"

namespace refenc {
class LocalRedisServer;
}

namespace refenc::profile {

/// Warnings for a warm-shared cell from its counter deltas: shared-tier errors (those requests went on
/// with the local tiers), or a service that never consulted a shared tier.
std::vector<std::string> shared_tier_warnings(const ServiceStats& delta);

class SharedTierServer {
 public:
  /// Starts the private server when `cache.shared` is "local"; nothing when it is empty or a URL.
  /// Local servers get a folder under `tmp_root` (default: the system temp folder). Throws
  /// Error(config) when redis-server is missing or does not start, its message led by `where`
  /// (e.g. "workloads/nightly.json: cache.shared") when given.
  SharedTierServer(const CacheSpec& cache, const std::string& tmp_root, const std::string& where = "");
  /// Stops the private server (if any): nothing listens on its port afterwards.
  ~SharedTierServer();
  SharedTierServer(const SharedTierServer&) = delete;
  SharedTierServer& operator=(const SharedTierServer&) = delete;

  /// True when there is a shared tier.
  bool active() const noexcept { return !url_.empty(); }
  /// The server's URL ("" when none).
  const std::string& url() const noexcept { return url_; }
  /// The private server's port, 0 when the server is not ours.
  int local_port() const noexcept;
  /// For the run's context: which server, and whether the run started it.
  std::string description() const;
  /// `cache` with shared_url and this run's prefix for cell number `cell` set.
  CacheSpec for_cell(const CacheSpec& cache, std::size_t cell) const;

 private:
  std::unique_ptr<LocalRedisServer> local_;
  std::string url_;
  std::string run_id_;  // unique per run: pid and start time
};

}  // namespace refenc::profile
