#include "store/tier_chain.hpp"

#include <utility>

namespace refenc::store {

TierChain::TierChain(std::shared_ptr<SecondTier<Artifact>> local, std::shared_ptr<SecondTier<Artifact>> shared)
    : local_(std::move(local)), shared_(std::move(shared)) {
  if (local_ && shared_) fill_ = std::make_unique<WriteBehind>(local_);
}

void TierChain::flush() noexcept {
  if (fill_) fill_->flush();
}

std::shared_ptr<const Artifact> TierChain::load(const ReferenceEncodeKey& key) noexcept {
  if (local_)
    if (auto hit = local_->load(key)) return hit;
  if (!shared_) return nullptr;
  auto hit = shared_->load(key);
  if (hit && fill_) fill_->store(key, hit);
  return hit;
}

void TierChain::store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept {
  if (local_) local_->store(key, stored);
  if (shared_) shared_->store(key, stored);
}

TierLookup<Artifact> TierChain::load_or_lead(const ReferenceEncodeKey& key, std::chrono::milliseconds wait) noexcept {
  if (!shared_) return local_ ? local_->load_or_lead(key, wait) : TierLookup<Artifact>{};
  // The disk is read without its lock: the shared tier's lease already makes one process of the fleet,
  // this host's included, encode a key while the others wait for its value, and taking the disk's
  // lock first (a lock file per key) cost more than the Redis round trip it guarded.
  if (local_)
    if (auto hit = local_->load(key)) return {std::move(hit), nullptr, false};
  TierLookup<Artifact> found = shared_->load_or_lead(key, wait);
  if (found.stored) {
    found.shared = true;
    if (fill_) fill_->store(key, found.stored);  // off the request path (write_behind.hpp)
    return found;
  }
  if (found.lease || !local_) return found;  // this process leads the fleet's encode of the key
  // No value and no lease: the shared tier is down, or its lease holder did not answer in time. The
  // processes of this host then queue on the disk's lock, so one of them encodes and the others read
  // its entry.
  return local_->load_or_lead(key, wait);
}

TierStats TierChain::stats() const {
  TierStats s;
  if (local_) s = local_->stats();
  if (shared_) {
    const TierStats r = shared_->stats();
    s.shared_hits += r.shared_hits;
    s.shared_misses += r.shared_misses;
    s.shared_writes += r.shared_writes;
    s.shared_errors += r.shared_errors;
    s.shared_corrupt += r.shared_corrupt;
    s.shared_lease_waits += r.shared_lease_waits;
    s.shared_lease_takeovers += r.shared_lease_takeovers;
  }
  return s;
}

}  // namespace refenc::store
