// PyTier: a second tier of refenc::Artifact entries (the disk tier, the Redis tier, or both chained)
// seen by the Python-object service as a tier of Python objects.
//
// The service calls the tier without the GIL; the file and network work stays that way, and the GIL
// is taken only to convert an entry to or from its Python form (ArtifactCodec). A stored object that
// has no entry form is not written (counted in `unconvertible`, with one warning); an entry that
// cannot be converted back is a miss. Like every SecondTier, nothing here throws.
//
//   auto chain = std::make_shared<store::TierChain>(store::open_disk_tier({.root = dir}), redis);
//   auto tier = std::make_shared<PyTier>(chain, codec);
//   ReferenceEncodeService<PreparedPtr, Outcome, SharedRef, PreparedPtr> service(hook, options, tier);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "artifact_codec.hpp"
#include "core/second_tier.hpp"
#include "py_ref.hpp"
#include "store/artifact.hpp"

namespace refenc::python {

class PyTier final : public SecondTier<SharedRef> {
 public:
  PyTier(std::shared_ptr<SecondTier<Artifact>> inner, std::shared_ptr<const ArtifactCodec> codec)
      : inner_(std::move(inner)), codec_(std::move(codec)) {}

  std::shared_ptr<const SharedRef> load(const ReferenceEncodeKey& key) noexcept override;
  void store(const ReferenceEncodeKey& key, const SharedRef& stored) noexcept override;
  TierLookup<SharedRef> load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept override;
  TierStats stats() const override { return inner_->stats(); }

  /// Stored objects that had no entry form (not written), and entries that did not convert back (misses).
  std::uint64_t unconvertible() const noexcept { return unconvertible_.load(std::memory_order_relaxed); }
  const std::shared_ptr<SecondTier<Artifact>>& inner() const noexcept { return inner_; }

 private:
  std::shared_ptr<const SharedRef> to_python(const std::shared_ptr<const Artifact>& entry) noexcept;

  std::shared_ptr<SecondTier<Artifact>> inner_;
  std::shared_ptr<const ArtifactCodec> codec_;
  std::atomic<std::uint64_t> unconvertible_{0};
  std::atomic<bool> warned_{false};
};

}  // namespace refenc::python
