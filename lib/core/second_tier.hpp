// SecondTier: the abstract persistent tier behind the service's memory LRU.
//
// The service consults it as the single-flight leader after a memory miss and writes through to it
// after an encode. Implementations (lib/store's DiskTier) never throw: an unreadable, corrupt or
// foreign entry is a miss, a failed write is skipped, and both show in the counters.
//
// Single-flight across processes: the leader calls load_or_lead(), not load(). A tier shared by
// several processes (a folder on one host, a Redis server for a fleet) may then take a lease on the
// key, so that the other processes wait for this one's entry instead of encoding the same clip too.
// The lease is held until the leader has written through with store() (or has failed), and is
// released when the last copy of TierLookup::lease is dropped.
//
//   auto tier = store::open_disk_tier({.root = "/var/cache/refenc"});
//   ReferenceEncodeService<Clip, Artifact, Artifact, Request> service(hook, {}, tier);
//   // inside the service, as leader:
//   TierLookup<Artifact> found = tier->load_or_lead(key, std::chrono::seconds(130));
//   if (!found.stored) { /* encode, then */ tier->store(key, artifact); }  // found.lease dropped after
#pragma once

#include <chrono>
#include <memory>

#include "core/reference_encode_key.hpp"
#include "core/service_stats.hpp"

namespace refenc {

/// What a leader's lookup in the second tier found.
template <class StoredT>
struct TierLookup {
  /// The entry, found at once or written by another process while this one waited; null on a miss.
  std::shared_ptr<const StoredT> stored;
  /// Held while this caller leads the encode across processes; dropping it releases the lease. Null
  /// when the tier takes no leases, when it found the entry, or when it could not take one.
  std::shared_ptr<void> lease;
  /// True when `stored` came from a tier shared with other hosts (the service reports a shared hit).
  bool shared = false;
};

template <class StoredT>
class SecondTier {
 public:
  virtual ~SecondTier() = default;
  /// The stored artifact for `key`, or nullptr on a miss (including any error). Must not throw.
  virtual std::shared_ptr<const StoredT> load(const ReferenceEncodeKey& key) noexcept = 0;
  /// Writes `stored` for `key` (atomically; best effort). Must not throw.
  virtual void store(const ReferenceEncodeKey& key, const StoredT& stored) noexcept = 0;
  /// A snapshot of the tier's counters.
  virtual TierStats stats() const = 0;

  /// The leader's lookup: like load(), but on a miss the tier may take a lease on `key` for this
  /// process, and when another process holds one it waits for that process's entry, at most `wait`,
  /// then returns a miss without a lease (the caller encodes itself). Must not throw. The default takes
  /// no lease.
  virtual TierLookup<StoredT> load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept {
    (void)wait;
    return {load(key), nullptr};
  }
};

}  // namespace refenc
