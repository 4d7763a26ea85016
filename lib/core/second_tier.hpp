// SecondTier: the abstract persistent tier behind the service's memory LRU.
//
// The service consults it as the single-flight leader after a memory miss and writes through to it
// after an encode. Implementations (lib/store's DiskTier) never throw: an unreadable, corrupt or
// foreign entry is a miss, a failed write is skipped, and both show in the counters.
//
//   auto tier = std::make_shared<store::DiskTier>(root);
//   ReferenceEncodeService<...> service(hook, {.second_tier = tier});
#pragma once

#include <memory>

#include "core/reference_encode_key.hpp"
#include "core/service_stats.hpp"

namespace refenc {

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
};

}  // namespace refenc
