// SharedVoiceCache: registered voices kept in the shared Redis tier as well as in a replica's
// VoiceCache (memory and disk), so that adding, replacing or removing a voice on one replica reaches
// every other replica's memory.
//
// A voice entry is stored in Redis as the same verified entry bytes as on disk, in one hash per voice
// name (`[<prefix>:]refenc:voices:v<FORMAT>:<voice>`, field = the canonical VoiceKey). Every put and
// removal increments a generation counter (`[<prefix>:]refenc:voices:v<FORMAT>:generation`). A read
// checks the generation (one small GET); while it is the one at which this replica last read the key,
// the local cache answers; after a change the key is read again from Redis: a new value replaces the
// local one, a missing one removes it. While Redis is unavailable the local cache answers alone.
//
//   store::SharedVoiceCache voices(std::make_shared<store::VoiceCache>(), store::open_redis_tier({.url = url}));
//   voices.put({"fish-s2-pro", "alice", "1", "codes"}, artifact);  // local + Redis, generation + 1
//   voices.get({"fish-s2-pro", "alice", "1", "codes"});            // on any replica
//   voices.clear_voice("alice");                                   // every replica's memory follows
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/redis_tier.hpp"
#include "store/voice_cache.hpp"

namespace refenc::store {

class SharedVoiceCache {
 public:
  SharedVoiceCache(std::shared_ptr<VoiceCache> local, std::shared_ptr<RedisTier> shared);

  /// The voice's artifact: the local cache while the generation is unchanged, else Redis (filling
  /// the local cache, or removing a voice that was removed elsewhere). Throws Error(bad_input) for a bad key.
  std::shared_ptr<const Artifact> get(const VoiceKey& key);
  /// Stores locally and in Redis; returns true when Redis took it.
  bool put(const VoiceKey& key, const Artifact& artifact);
  /// Removes the voice locally and from Redis (of `model_type` only, when given); true when anything
  /// was removed from either.
  bool clear_voice(std::string_view voice_name, const std::optional<std::string>& model_type = std::nullopt);

  /// The keys of `voice_name` held in Redis (empty when it is unavailable).
  std::vector<VoiceKey> shared_keys(std::string_view voice_name);

  /// Every voice key held in Redis under this prefix (empty when it is unavailable).
  std::vector<VoiceKey> shared_list();

  VoiceCache& local() noexcept { return *local_; }
  RedisTier& shared() noexcept { return *shared_; }
  /// Voice entries found invalid in Redis (deleted).
  std::uint64_t corrupt() const;

 private:
  std::string hash_key(const std::string& voice_name) const;
  std::string scoped(const std::string& canonical) const;
  /// The generation now, or nullopt when Redis is unavailable.
  std::optional<std::string> generation();
  void bump_generation();

  std::shared_ptr<VoiceCache> local_;
  std::shared_ptr<RedisTier> shared_;
  std::string namespace_;  // "[<prefix>:]refenc:voices:v<FORMAT>:"
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::string> seen_;  // canonical key -> generation it was read at
  std::uint64_t corrupt_ = 0;
};

}  // namespace refenc::store
