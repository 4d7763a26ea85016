// VoiceCache: artifacts of registered voices, kept apart from the request cache.
//
// Registered (uploaded) voices have their own lifetime and invalidation path: an entry is keyed by
// model type, voice name (case-insensitive), voice version and artifact kind, lives in a byte-bounded
// LRU in memory and, persisted, under <root>/voices/v<FORMAT>/<model>/<voice>/ in the same entry
// format and with the same atomic writes as the disk tier. clear_voice() drops one voice's entries from
// memory and disk; delete_invalidation_counter counts the clears that removed something. Thread-safe.
//
//   store::VoiceCache voices({.root = store::default_cache_root()});
//   voices.put({"fish-s2-pro", "Alice", "1", "codes"}, artifact);
//   auto hit = voices.get({"fish-s2-pro", "alice", "1", "codes"});   // same voice: names ignore case
//   voices.clear_voice("ALICE");                                      // memory and disk, every model
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/artifact.hpp"
#include "store/entry_folder.hpp"

namespace refenc::store {

struct VoiceKey {
  std::string model_type;
  std::string voice_name;  ///< Compared case-insensitively (ASCII).
  std::string voice_version;
  std::string artifact_kind;

  /// JSON object of the four fields, sorted keys, voice name lower-cased. Throws Error(bad_input)
  /// for an invalid field (see VoiceCache::normalize_voice_name).
  std::string canonical() const;
  /// Parses canonical() output; throws Error(bad_input) on anything else.
  static VoiceKey from_canonical(const std::string& text);
};

struct VoiceCacheOptions {
  std::string root;                              ///< Empty: default_cache_root().
  bool persist = true;                           ///< False: memory only.
  std::uint64_t max_bytes = 512ull << 20;        ///< Memory bound.
  std::uint64_t max_entry_bytes = 256ull << 20;  ///< Larger entries are not persisted nor loaded.
};

struct VoiceCacheStats {
  std::uint64_t entries = 0;        ///< In memory.
  std::uint64_t memory_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t hit_count = 0;      ///< get() answered from memory or disk.
  std::uint64_t miss_count = 0;
  std::uint64_t eviction_count = 0;
  std::uint64_t delete_invalidation_counter = 0;  ///< clear_voice() calls that removed something.
};

/// One stored voice entry, as list() reports it.
struct VoiceEntry {
  VoiceKey key;               ///< voice_name as stored (lower case).
  std::uint64_t bytes = 0;    ///< File size (or artifact bytes when memory-only).
  std::string path;           ///< Empty when memory-only.
};

class VoiceCache {
 public:
  /// Opens the voices folder under the root; an unusable root gives a memory-only cache and one warning.
  explicit VoiceCache(VoiceCacheOptions options = {});

  /// The lower-cased name, or Error(bad_input) naming the problem: empty, longer than 64 bytes, a
  /// path separator, a leading '.', control characters, or leading/trailing spaces.
  static std::string normalize_voice_name(std::string_view name);

  /// The artifact for `key` (memory, then disk), or nullptr. Throws Error(bad_input) for a bad key.
  std::shared_ptr<const Artifact> get(const VoiceKey& key);
  /// Stores `artifact` in memory and, when persistent, on disk; returns true when written to disk.
  bool put(const VoiceKey& key, const Artifact& artifact);
  /// Removes every entry of `voice_name` (of `model_type` only, when given) from memory and disk.
  /// Returns true when something was removed (and then counts one invalidation).
  bool clear_voice(std::string_view voice_name, const std::optional<std::string>& model_type = std::nullopt);
  /// Removes every voice entry from memory and disk.
  void clear();
  /// Stored entries (from disk when persistent), optionally of one voice, sorted by key.
  std::vector<VoiceEntry> list(const std::optional<std::string>& voice_name = std::nullopt) const;

  VoiceCacheStats stats() const;
  /// True when entries are written to disk (persist requested and the folder usable).
  bool persistent() const noexcept { return folder_ && folder_->enabled(); }
  /// The voices folder (<root>/voices/v<FORMAT>), or empty when memory-only by option.
  std::filesystem::path folder() const { return folder_ ? folder_->dir() : std::filesystem::path(); }

 private:
  struct Slot {
    VoiceKey key;
    std::shared_ptr<const Artifact> artifact;
    std::uint64_t bytes = 0;
    std::list<std::string>::iterator lru;
  };
  static std::filesystem::path relative_path(const VoiceKey& normalized, const std::string& canonical);
  void insert_locked(const std::string& canonical, const VoiceKey& key, std::shared_ptr<const Artifact> a);
  void erase_locked(const std::string& canonical);

  VoiceCacheOptions options_;
  std::unique_ptr<EntryFolder> folder_;
  mutable std::mutex mutex_;  // guards everything below; held across the disk I/O of one call
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, Slot> slots_;
  std::uint64_t memory_bytes_ = 0;
  VoiceCacheStats counters_;
};

}  // namespace refenc::store
