#include "core/service_stats.hpp"

namespace refenc {

ServiceStats ServiceStats::minus(const ServiceStats& e) const {
  ServiceStats d = *this;  // gauges (entries, bytes, disk_bytes) keep this snapshot's values
  d.hits -= e.hits;
  d.misses -= e.misses;
  d.merged -= e.merged;
  d.failed -= e.failed;
  d.uncacheable -= e.uncacheable;
  d.timeouts -= e.timeouts;
  d.evictions -= e.evictions;
  d.oversize -= e.oversize;
  d.batches -= e.batches;
  d.batched_items -= e.batched_items;
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) d.batch_sizes[i] -= e.batch_sizes[i];
  d.tier.disk_hits -= e.tier.disk_hits;
  d.tier.disk_misses -= e.tier.disk_misses;
  d.tier.disk_writes -= e.tier.disk_writes;
  d.tier.disk_errors -= e.tier.disk_errors;
  d.tier.disk_corrupt -= e.tier.disk_corrupt;
  d.tier.disk_evictions -= e.tier.disk_evictions;
  d.tier.shared_hits -= e.tier.shared_hits;
  d.tier.shared_misses -= e.tier.shared_misses;
  d.tier.shared_writes -= e.tier.shared_writes;
  d.tier.shared_errors -= e.tier.shared_errors;
  d.tier.shared_corrupt -= e.tier.shared_corrupt;
  d.tier.shared_lease_waits -= e.tier.shared_lease_waits;
  d.tier.shared_lease_takeovers -= e.tier.shared_lease_takeovers;
  return d;
}

std::vector<std::pair<std::string, std::uint64_t>> ServiceStats::fields() const {
  return {
      {"hits", hits},
      {"misses", misses},
      {"merged", merged},
      {"failed", failed},
      {"uncacheable", uncacheable},
      {"timeouts", timeouts},
      {"entries", entries},
      {"bytes", bytes},
      {"evictions", evictions},
      {"oversize", oversize},
      {"batches", batches},
      {"batched_items", batched_items},
      {"disk_hits", tier.disk_hits},
      {"disk_misses", tier.disk_misses},
      {"disk_writes", tier.disk_writes},
      {"disk_errors", tier.disk_errors},
      {"disk_corrupt", tier.disk_corrupt},
      {"disk_evictions", tier.disk_evictions},
      {"disk_bytes", tier.disk_bytes},
      {"shared_hits", tier.shared_hits},
      {"shared_misses", tier.shared_misses},
      {"shared_writes", tier.shared_writes},
      {"shared_errors", tier.shared_errors},
      {"shared_corrupt", tier.shared_corrupt},
      {"shared_lease_waits", tier.shared_lease_waits},
      {"shared_lease_takeovers", tier.shared_lease_takeovers},
  };
}

}  // namespace refenc
