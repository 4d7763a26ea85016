// TierChain: a host-local tier (the disk) in front of a tier shared by the fleet (Redis), as one
// second tier: memory, then disk, then Redis, then encode.
//
// A lookup reads the local tier first, then the shared one. The leader's lookup takes the shared
// tier's lease (one replica of the fleet encodes a key while the others wait for its value) and
// falls back to the local tier's lock only when the shared tier answers with neither a value nor a
// lease (down, or its lease holder silent). A shared hit is written to the local tier behind the
// request (WriteBehind: the caller does not wait for the disk's fsync) and the service puts it in
// memory. Encoded entries are written through to both tiers. Counters are the local tier's disk_*
// and the shared tier's shared_*. Either tier may be null. Nothing here throws.
//
//   auto chain = std::make_shared<store::TierChain>(store::open_disk_tier({.root = dir}),
//                                                   store::open_redis_tier({.url = url}));
//   ReferenceEncodeService<Clip, Artifact, Artifact, Request> service(hook, {}, chain);
#pragma once

#include <memory>

#include "store/write_behind.hpp"

#include "core/second_tier.hpp"
#include "store/artifact.hpp"

namespace refenc::store {

class TierChain final : public SecondTier<Artifact> {
 public:
  TierChain(std::shared_ptr<SecondTier<Artifact>> local, std::shared_ptr<SecondTier<Artifact>> shared);

  std::shared_ptr<const Artifact> load(const ReferenceEncodeKey& key) noexcept override;
  void store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept override;
  TierLookup<Artifact> load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept override;
  TierStats stats() const override;
  /// Returns when every shared hit so far is written to the local tier.
  void flush() noexcept;

  const std::shared_ptr<SecondTier<Artifact>>& local() const noexcept { return local_; }
  const std::shared_ptr<SecondTier<Artifact>>& shared() const noexcept { return shared_; }

 private:
  std::shared_ptr<SecondTier<Artifact>> local_;
  std::shared_ptr<SecondTier<Artifact>> shared_;
  std::unique_ptr<WriteBehind> fill_;  ///< Fills the local tier with shared hits; null without one.
};

}  // namespace refenc::store
