// The bounded, thread-safe memo behind reference_path_cache_key: canonical path -> (file identity,
// whole-file digest, sentinel digest), least recently used entry evicted past its capacity.
//
//   audio::PathKeyMemo memo(1024);
//   std::string key = audio::path_cache_key(memo, "clip.flac", /*trust_stat=*/false);
//   memo.stats().hits;
#pragma once

#include "audio/local_file.hpp"

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace refenc::audio {

class PathKeyMemo {
 public:
  struct Entry {
    FileIdentity identity;  ///< size, mtime, ctime, inode (and device) when the digest was taken
    std::string digest;     ///< SHA-256 hex of the whole file
    std::string sentinel;   ///< sentinel_digest of the same content
  };
  struct Stats {
    std::uint64_t hits = 0;                 ///< identity matched (and the sentinel, unless trusted)
    std::uint64_t misses = 0;               ///< no entry, or identity changed: whole file hashed
    std::uint64_t sentinel_mismatches = 0;  ///< identity matched but the sentinel did not: rehashed
    std::uint64_t unstable = 0;             ///< the file changed while hashed: digest returned, not stored
  };

  explicit PathKeyMemo(std::size_t capacity = 1024) : capacity_(capacity) {}

  /// The entry for `canonical_path`, marked most recently used.
  std::optional<Entry> find(const std::string& canonical_path);
  /// Inserts or replaces, evicting the least recently used entry past capacity.
  void store(const std::string& canonical_path, Entry entry);
  void erase(const std::string& canonical_path);
  void clear();
  std::size_t size() const;
  std::size_t capacity() const { return capacity_; }
  Stats stats() const;

  void count_hit();
  void count_miss();
  void count_sentinel_mismatch();
  void count_unstable();

 private:
  using Lru = std::list<std::pair<std::string, Entry>>;
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  Lru lru_;  // front = most recent
  std::unordered_map<std::string, Lru::iterator> index_;
  Stats stats_;
};

/// The process-wide memo reference_path_cache_key uses (capacity 1024).
PathKeyMemo& path_key_memo();

/// reference_path_cache_key against a given memo: stat, canonicalise, and on an identity match return
/// the memoised digest (after re-checking the sentinel unless `trust_stat`); otherwise hash the whole
/// file and store it only if its identity did not change while hashing. Refuses (Error(bad_input))
/// missing files, directories, special files, and files over `max_bytes` (0: no limit).
std::string path_cache_key(PathKeyMemo& memo, const std::string& path, bool trust_stat, std::uint64_t max_bytes = 0);

/// The memo entry for `path` (canonicalised), if any; no file is read.
std::optional<PathKeyMemo::Entry> memoised_path_key(PathKeyMemo& memo, const std::string& path);

/// Records a digest computed by a caller that read `path` whole (load_reference does), when the file's
/// identity before reading is still its identity now.
void remember_path_key(PathKeyMemo& memo, const std::string& path, const FileIdentity& before,
                       const std::string& digest, const std::string& sentinel);

}  // namespace refenc::audio
