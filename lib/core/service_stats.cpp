#include "core/service_stats.hpp"

namespace refenc {

namespace {
/// a - b for counters, 0 when b is larger (a counter reset between the snapshots).
void sub(std::uint64_t& a, std::uint64_t b) { a = a > b ? a - b : 0; }
}  // namespace

ServiceStats ServiceStats::minus(const ServiceStats& e) const {
  ServiceStats d = *this;  // gauges (entries, bytes, disk_bytes) keep this snapshot's values
  sub(d.hits, e.hits);
  sub(d.misses, e.misses);
  sub(d.merged, e.merged);
  sub(d.failed, e.failed);
  sub(d.uncacheable, e.uncacheable);
  sub(d.timeouts, e.timeouts);
  sub(d.evictions, e.evictions);
  sub(d.oversize, e.oversize);
  sub(d.cancelled, e.cancelled);
  sub(d.abandoned, e.abandoned);
  sub(d.loads, e.loads);
  sub(d.load_ns, e.load_ns);
  sub(d.encode_ns, e.encode_ns);
  sub(d.failed_batches, e.failed_batches);
  sub(d.batches, e.batches);
  sub(d.batched_items, e.batched_items);
  sub(d.batch_length_units, e.batch_length_units);
  sub(d.batch_padded_units, e.batch_padded_units);
  for (std::size_t i = 0; i < batch_sizes.size(); ++i) sub(d.batch_sizes[i], e.batch_sizes[i]);
  sub(d.tier.disk_hits, e.tier.disk_hits);
  sub(d.tier.disk_misses, e.tier.disk_misses);
  sub(d.tier.disk_writes, e.tier.disk_writes);
  sub(d.tier.disk_errors, e.tier.disk_errors);
  sub(d.tier.disk_corrupt, e.tier.disk_corrupt);
  sub(d.tier.disk_evictions, e.tier.disk_evictions);
  sub(d.tier.shared_hits, e.tier.shared_hits);
  sub(d.tier.shared_misses, e.tier.shared_misses);
  sub(d.tier.shared_writes, e.tier.shared_writes);
  sub(d.tier.shared_errors, e.tier.shared_errors);
  sub(d.tier.shared_corrupt, e.tier.shared_corrupt);
  sub(d.tier.shared_lease_waits, e.tier.shared_lease_waits);
  sub(d.tier.shared_lease_takeovers, e.tier.shared_lease_takeovers);
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
      {"cancelled", cancelled},
      {"abandoned", abandoned},
      {"entries", entries},
      {"bytes", bytes},
      {"evictions", evictions},
      {"oversize", oversize},
      {"batches", batches},
      {"batched_items", batched_items},
      {"failed_batches", failed_batches},
      {"batch_length_units", batch_length_units},
      {"batch_padded_units", batch_padded_units},
      {"loads", loads},
      {"load_ns", load_ns},
      {"mean_miss_penalty_ns", mean_miss_penalty_ns()},
      {"encode_ns", encode_ns},
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
