// DiskTier: the persistent second tier of the reference encode cache, one torch archive per entry.
//
// Layout: <root>/v<FORMAT>/<model_id>/<digest[0:2]>/<digest>.pt, digest = key.digest(), model_id
// sanitised to one safe path component. Each file is an entry (entry_format.hpp) holding the full key
// and a checksum, both verified on load: a wrong, truncated, garbage or older-format file is a miss,
// is deleted and counts as disk_corrupt. Writes are atomic (temp file, fsync, rename), so any number
// of threads and processes can share a root. The total is bounded by max_disk_bytes with LRU eviction
// by file mtime (a hit touches its file). A root that is unusable disables the tier with one warning;
// the service then runs memory-only. load() and store() never throw.
//
// Single-flight across the processes of one host: load_or_lead() (the service's leader lookup), on a
// miss, takes an flock on `<digest>.lock` beside the entry and returns it as the lease; a process
// that finds the lock held waits for the holder's entry (polling it with backoff, at most `wait`),
// takes the lead itself when the lock frees without an entry (the holder failed or died), and encodes
// itself after `wait`. Lock files are deleted by whoever releases them; gc() deletes those left by
// killed holders. scan(), verify(), clear() and eviction see `.pt` entries only.
//
//   auto tier = store::open_disk_tier({.root = "/var/cache/refenc", .max_disk_bytes = 1ull << 30});
//   ReferenceEncodeService<Clip, Artifact, Artifact, Request> service(hook, {}, tier);
//   tier->gc();                      // enforce the bound now
//   tier->verify(/*remove=*/true);   // read every entry, delete the corrupt ones
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/second_tier.hpp"
#include "store/artifact.hpp"
#include "store/entry_folder.hpp"

namespace refenc::store {

struct DiskTierOptions {
  std::string root;                              ///< Empty: default_cache_root().
  std::uint64_t max_disk_bytes = 2ull << 30;     ///< Bound on the bytes of all entries.
  std::uint64_t max_entry_bytes = 256ull << 20;  ///< Larger entries are refused on write and on load.
  std::chrono::seconds stale_temp_age{600};      ///< Temporary files older than this are deleted.
};

/// Entries and bytes of one model folder.
struct ModelUsage {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
};

struct ScanReport {
  std::map<std::string, ModelUsage> models;  ///< By model folder name (the sanitised model_id).
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;
  std::uint64_t stale_temp_files = 0;  ///< Deleted during the scan.
};

struct GcReport {
  std::uint64_t entries_before = 0;
  std::uint64_t bytes_before = 0;
  std::uint64_t evicted = 0;
  std::uint64_t entries_after = 0;
  std::uint64_t bytes_after = 0;
  std::uint64_t stale_temp_files = 0;
  std::uint64_t stale_lock_files = 0;  ///< Lock files no process held (left by killed leaders), deleted.
};

/// Counters of load_or_lead's cross-process single-flight (this process's lookups).
struct DiskLockStats {
  std::uint64_t leases = 0;          ///< Misses that took the key's lock: this process encodes.
  std::uint64_t lock_waits = 0;      ///< Misses that found another process leading the key, and waited.
  std::uint64_t lock_wait_hits = 0;  ///< Waits answered by the other process's entry (a disk hit).
  std::uint64_t lock_takeovers = 0;  ///< Waits that ended with the lock free and no entry: this one leads.
  std::uint64_t lock_timeouts = 0;   ///< Waits that gave up after `wait`: this one encodes without a lease.
};

struct CorruptEntry {
  std::string path;
  std::string reason;
};

struct VerifyReport {
  std::uint64_t checked = 0;
  std::uint64_t ok = 0;
  std::vector<CorruptEntry> corrupt;
  std::uint64_t removed = 0;
};

class DiskTier final : public SecondTier<Artifact> {
 public:
  /// Opens (creating it 0700 when missing) the tier's folder; an unusable root gives a disabled
  /// tier and one warning, never an exception.
  explicit DiskTier(DiskTierOptions options = {});

  std::shared_ptr<const Artifact> load(const ReferenceEncodeKey& key) noexcept override;
  void store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept override;
  TierStats stats() const override;
  /// On a miss, leads the key across processes (the lease holds `<digest>.lock`) or waits, at most
  /// `wait`, for the process that does. A hit found at once or while waiting counts as a disk hit.
  TierLookup<Artifact> load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept override;
  /// Counters of load_or_lead.
  DiskLockStats lock_stats() const;

  /// False when the root was unusable or a write found it read-only or full.
  bool enabled() const noexcept { return folder_.enabled(); }
  /// Why the tier is disabled (empty while enabled).
  std::string disabled_reason() const { return folder_.disabled_reason(); }
  /// The root folder and the versioned folder the entries live in.
  const std::filesystem::path& root() const noexcept { return root_; }
  const std::filesystem::path& entries_folder() const noexcept { return folder_.dir(); }
  const DiskTierOptions& options() const noexcept { return options_; }
  /// Where `key`'s entry lives.
  std::filesystem::path entry_path(const ReferenceEncodeKey& key) const;
  /// The lock file a leader of `key` holds: entry_path with `.lock` for `.pt`.
  std::filesystem::path lock_path(const ReferenceEncodeKey& key) const;

  /// Entries and bytes per model; deletes stale temporary files.
  ScanReport scan() const;
  /// Deletes stale temporary files and unheld lock files, and evicts least recently used entries down
  /// to `max_bytes` (default: the tier's max_disk_bytes).
  GcReport gc(std::optional<std::uint64_t> max_bytes = std::nullopt);
  /// Deletes every entry, or those of `model_id`. Returns how many were deleted.
  std::uint64_t clear(const std::optional<std::string>& model_id = std::nullopt);
  /// Reads and checks every entry (key matches its file name and folder, checksum); `remove` deletes
  /// the corrupt ones.
  VerifyReport verify(bool remove);

 private:
  static std::filesystem::path relative_path(const ReferenceEncodeKey& key);
  /// load() without counting a hit or a miss (errors and corrupt entries are counted).
  std::shared_ptr<const Artifact> read_entry(const ReferenceEncodeKey& key) noexcept;
  GcReport evict_to(std::uint64_t target, std::uint64_t bound);
  void maybe_evict() noexcept;

  DiskTierOptions options_;
  std::filesystem::path root_;
  EntryFolder folder_;
  std::mutex gc_mutex_;  // one eviction scan at a time in this process
  std::atomic<std::uint64_t> known_bytes_{0};
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, writes_{0}, errors_{0}, corrupt_{0}, evictions_{0};
  std::atomic<std::uint64_t> leases_{0}, lock_waits_{0}, lock_wait_hits_{0}, lock_takeovers_{0}, lock_timeouts_{0};
};

/// A shared DiskTier for a service, the CLI or the profiler.
std::shared_ptr<DiskTier> open_disk_tier(DiskTierOptions options = {});

}  // namespace refenc::store
