// RedisTier: the second tier shared by every replica of a deployment, on a Redis server (hiredis).
//
// A value holds the same self-describing bytes as a disk entry (entry_format.hpp): the format
// version, the full key and a SHA-256 checksum, all checked on load, so a corrupt, truncated, foreign
// or other-deployment value is a miss: it is counted (shared_corrupt), deleted if it is still the
// value that was read, and recomputed, never returned. With a deployment prefix the key stored in
// the value is `{"deployment":"<prefix>","key":<canonical key>}`, so a value cannot answer for
// another prefix either, whatever Redis returns.
//
// Keys: `[<prefix>:]refenc:v<FORMAT>:<model_id>:<digest>` for values, the same plus `:lease` for the
// lease of a key being encoded. Bounds come from the server (`maxmemory` with an LRU policy); a
// server with no memory limit or a policy that evicts nothing is warned about once. An optional TTL
// sets an expiry on each value.
//
// Fleet-wide single-flight (load_or_lead): a GET reads the value; when there is none, one script
// reads it again or takes the key's lease (`SET lease token NX PX lease_ttl`) atomically; another replica that finds the lease polls for the value with
// backoff, at most `wait`, taking the lease over when it lapses without a value (its holder crashed),
// and otherwise encodes itself. While held, the lease's expiry is extended every third of lease_ttl,
// so a long encode keeps it and a crashed holder loses it within lease_ttl; it is released (only if
// it is still ours) when dropped.
//
// Failure never fails a request: every command has a timeout, and a server that is down, slow or
// refuses the login opens RedisClient's circuit (one warning), after which the tier answers misses
// and skips writes until a probe finds the server again. load() and store() never throw.
//
//   auto shared = store::open_redis_tier({.url = "redis://10.0.0.5:6379", .prefix = "tts-eu"});
//   auto chain = std::make_shared<store::TierChain>(store::open_disk_tier(), shared);
//   ReferenceEncodeService<Clip, Artifact, Artifact, Request> service(hook, {}, chain);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/second_tier.hpp"
#include "store/artifact.hpp"
#include "store/redis_client.hpp"

namespace refenc::store {

/// Environment variable holding the shared cache URL when no option gives one.
inline constexpr const char* kSharedCacheEnv = "REFENC_SHARED_CACHE";

struct RedisTierOptions {
  std::string url;              ///< redis://[user[:password]@]host[:port][/db]
  std::string prefix;           ///< Deployment prefix: [A-Za-z0-9._-], at most 64 bytes.
  std::chrono::seconds ttl{0};  ///< Expiry of each value; 0: none (the server's LRU bounds it).
  std::chrono::milliseconds connect_timeout{250};
  std::chrono::milliseconds command_timeout{250};
  std::chrono::milliseconds lease_ttl{10'000};  ///< How long a lease outlives a holder that stopped renewing it.
  std::chrono::milliseconds poll_max{50};       ///< Longest pause between a follower's polls.
  std::uint64_t max_value_bytes = 64ull << 20;  ///< Larger entries are neither written nor read.
  std::size_t max_connections = 8;
  bool allow_insecure = false;  ///< Allow a non-loopback server without a password.
};

/// What `CONFIG GET` and `INFO` say about the server (fields empty when it refused to say).
struct RedisServerInfo {
  bool reachable = false;
  std::string version;
  std::optional<std::uint64_t> maxmemory;
  std::string policy;
  std::optional<std::uint64_t> used_memory;
  std::uint64_t entries = 0;    ///< Values under this tier's prefix and format (counted with SCAN).
  bool entries_capped = false;  ///< The count stopped at its cap.
  std::string failure;          ///< Why it is unreachable.
};

class RedisTier final : public SecondTier<Artifact> {
 public:
  /// Parses the URL and checks the options; throws Error(config) for a bad URL or prefix, or for a
  /// non-loopback server without a password unless allow_insecure. Connects lazily.
  explicit RedisTier(RedisTierOptions options);

  std::shared_ptr<const Artifact> load(const ReferenceEncodeKey& key) noexcept override;
  void store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept override;
  TierLookup<Artifact> load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept override;
  TierStats stats() const override;

  /// Opens the pool's connections (all of them by default) and checks the server's memory bound now,
  /// as a long-running replica has them, so that its first lookups cost what later ones do.
  void warm_up(std::size_t connections = SIZE_MAX) noexcept;
  /// The Redis key of `key`'s value (its lease is this plus ":lease").
  std::string value_key(const ReferenceEncodeKey& key) const;
  /// The key string stored inside a value: the canonical key, wrapped with the prefix when there is one.
  std::string scoped_key_text(const ReferenceEncodeKey& key) const;
  /// The server's memory bound, policy and this tier's entry count (at most `max_scan` counted).
  RedisServerInfo server_info(std::uint64_t max_scan = 1'000'000);
  /// Deletes this tier's values (of `model_id` only, when given); returns how many.
  std::uint64_t clear(const std::optional<std::string>& model_id = std::nullopt);
  /// The URL without its password.
  std::string display() const;
  /// The connection pool (for the voice store and for tests).
  RedisClient& client() noexcept { return *client_; }
  const RedisTierOptions& options() const noexcept { return options_; }

 private:
  enum class Found { hit, miss, failed };
  /// GET and verify; `out` set on a hit. A bad value is deleted and counted.
  Found fetch(const ReferenceEncodeKey& key, const std::string& vkey, std::shared_ptr<const Artifact>& out) noexcept;
  /// Decodes and checks a value read for `key`; a bad one is counted and deleted (if unchanged).
  bool verify(const ReferenceEncodeKey& key, const std::string& vkey, const std::string& value,
              std::shared_ptr<const Artifact>& out);
  std::shared_ptr<void> make_lease(const std::string& lease_key, const std::string& token);
  void check_server_once() noexcept;

  RedisTierOptions options_;
  std::shared_ptr<RedisClient> client_;  // shared with the leases handed out
  std::string namespace_;                // "[<prefix>:]refenc:v<FORMAT>:"
  std::atomic<bool> checked_{false};
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, writes_{0}, errors_{0}, corrupt_{0}, lease_waits_{0}, takeovers_{0};
};

/// A RedisTier for a service, the CLI or the profiler.
std::shared_ptr<RedisTier> open_redis_tier(RedisTierOptions options);

}  // namespace refenc::store
