// VoiceCache: artifacts of registered voices, kept apart from the request cache.
//
// Registered (uploaded) voices have their own lifetime and invalidation path: an entry is keyed by
// model type, voice name (case-insensitive), voice version and artifact kind, and persisted under
// <root>/voices/v<FORMAT>/<model>/<voice>/ in the same entry format and with the same atomic writes as
// the disk tier. In memory every entry put or loaded is pinned: nothing evicts it (ad-hoc requests go
// through the service's own LRU, which never holds voices), and clear_voice() / clear() are the only
// ways out. What bounds the memory is the number of registered voices: a put that would register
// voice max_voices + 1 throws Error(bad_input) "voice cap reached: ...". Voices are counted by name
// over memory and the folder (every model, version and kind of a name is one voice), under a lock
// file so that processes sharing the folder cannot overshoot together. delete_invalidation_counter
// counts the clears that removed something. Thread-safe.
//
//   store::VoiceCache voices({.root = store::default_cache_root(), .max_voices = 1000});
//   voices.put({"fish-s2-pro", "Alice", "1", "codes"}, artifact);
//   auto hit = voices.get({"fish-s2-pro", "alice", "1", "codes"});   // same voice: names ignore case
//   voices.clear_voice("ALICE");                                      // memory and disk, every model
//   std::uint64_t g = voices.generation("bob");                       // before encoding bob's clip
//   voices.put_if_current({"fish-s2-pro", "bob", "1", "codes"}, artifact, g);  // nullopt: removed meanwhile
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
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
  std::size_t max_voices = 1000;                 ///< Cap on registered voice names (>= 1).
  std::uint64_t max_entry_bytes = 256ull << 20;  ///< Larger entries are not persisted nor loaded.
};

struct VoiceCacheStats {
  std::uint64_t entries = 0;       ///< In memory (all pinned).
  std::uint64_t memory_bytes = 0;  ///< Of the entries in memory.
  std::uint64_t max_voices = 0;
  std::uint64_t hit_count = 0;  ///< get() answered from memory or disk.
  std::uint64_t miss_count = 0;
  std::uint64_t cap_refusals = 0;                 ///< put() calls refused at the voice cap.
  std::uint64_t delete_invalidation_counter = 0;  ///< clear_voice() calls that removed something.
};

/// One stored voice entry, as list() reports it.
struct VoiceEntry {
  VoiceKey key;             ///< voice_name as stored (lower case).
  std::uint64_t bytes = 0;  ///< File size (or artifact bytes when memory-only).
  std::string path;         ///< Empty when memory-only.
};

class VoiceCache {
 public:
  /// Opens the voices folder under the root; an unusable root gives a memory-only cache and one warning.
  /// Throws Error(config) when max_voices is 0.
  explicit VoiceCache(VoiceCacheOptions options = {});

  /// The lower-cased name, or Error(bad_input) naming the problem: empty, longer than 64 bytes, a
  /// path separator, a leading '.', control characters, or leading/trailing spaces.
  static std::string normalize_voice_name(std::string_view name);

  /// The artifact for `key` (memory, then disk), or nullptr. Throws Error(bad_input) for a bad key.
  std::shared_ptr<const Artifact> get(const VoiceKey& key);
  /// Stores `artifact` in memory (pinned) and, when persistent, on disk; returns true when written to
  /// disk. Throws Error(bad_input) "voice cap reached: N registered voices (max_voices M)" when the
  /// key's voice is not registered yet and max_voices voices are.
  bool put(const VoiceKey& key, const Artifact& artifact);
  /// The generation of `voice_name` in this process: clear_voice() of that name and clear() advance
  /// it. A caller takes it before encoding a voice and hands it to put_if_current(), so that a voice
  /// removed while it was being encoded is not stored afterwards (the voices' counterpart of the
  /// service's forget(key)).
  std::uint64_t generation(std::string_view voice_name) const;
  /// put() if `voice_name`'s generation is still `generation`, checked and stored under one lock:
  /// put()'s result, or nullopt (nothing stored) when the voice was removed since.
  std::optional<bool> put_if_current(const VoiceKey& key, const Artifact& artifact, std::uint64_t generation);
  /// Throws put()'s cap error now if registering `voice_name` would exceed the cap (to fail before an
  /// encode); another process may still take the last place before the put.
  void check_cap(std::string_view voice_name);
  /// Distinct registered voice names, in memory and in the folder.
  std::size_t voice_count() const;
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
  };
  static std::filesystem::path relative_path(const VoiceKey& normalized, const std::string& canonical);
  void insert_locked(const std::string& canonical, const VoiceKey& key, std::shared_ptr<const Artifact> a);
  void erase_locked(const std::string& canonical);
  /// The folder names (sanitize_component of the voice name) of every registered voice.
  std::set<std::string> voice_folders_locked() const;
  /// Throws the cap error unless `name` (normalised) is registered or there is room for one more.
  void check_cap_locked(const std::string& name);
  std::uint64_t generation_locked(const std::string& name) const;
  bool put_locked(const VoiceKey& normalized, const std::string& canonical, const Artifact& artifact);

  VoiceCacheOptions options_;
  std::unique_ptr<EntryFolder> folder_;
  mutable std::mutex mutex_;  // guards everything below; held across the disk I/O of one call
  std::unordered_map<std::string, Slot> slots_;
  std::uint64_t memory_bytes_ = 0;
  VoiceCacheStats counters_;
  std::unordered_map<std::string, std::uint64_t> removals_;  ///< clear_voice() calls per voice name.
  std::uint64_t clears_ = 0;                                 ///< clear() calls.
};

}  // namespace refenc::store
