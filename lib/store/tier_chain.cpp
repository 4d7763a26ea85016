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
  // Processes on this host queue on the local tier's lock first, so one of them asks the fleet and the
  // others read the entry it writes.
  TierLookup<Artifact> local;
  if (local_) {
    local = local_->load_or_lead(key, wait);
    if (local.stored) return local;
  }
  TierLookup<Artifact> found = shared_->load_or_lead(key, wait);
  if (found.stored) {
    found.shared = true;
    // Off the request path. This host's processes queued on the local lease may miss the disk until
    // the fill lands; they then ask the shared tier too, which costs one more round trip, not an encode.
    if (fill_) fill_->store(key, found.stored);
    return found;
  }
  // This process leads: both leases are held until the service has written through to both tiers.
  if (local.lease && found.lease)
    found.lease = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(local.lease),
                                                                                            std::move(found.lease));
  else if (local.lease)
    found.lease = std::move(local.lease);
  return found;
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
