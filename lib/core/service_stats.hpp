// ServiceStats: an immutable snapshot of a ReferenceEncodeService's counters and gauges.
//
// Counters only grow; `minus` gives the activity between two snapshots (gauges keep the newer value;
// a counter that is smaller in the newer snapshot, as after a restart, gives 0, never a wrapped value):
//
//   auto before = service.stats();
//   run_phase();
//   auto delta = service.stats().minus(before);   // delta.hits == hits during the phase
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace refenc {

/// Counters of a second (persistent) tier. All zero when the service has none.
struct TierStats {
  std::uint64_t disk_hits = 0;       ///< Lookups answered from disk.
  std::uint64_t disk_misses = 0;     ///< Lookups that found no usable entry.
  std::uint64_t disk_writes = 0;     ///< Entries written.
  std::uint64_t disk_errors = 0;     ///< I/O errors turned into misses or skipped writes.
  std::uint64_t disk_corrupt = 0;    ///< Entries found invalid, deleted, and recomputed.
  std::uint64_t disk_evictions = 0;  ///< Entries removed to keep the byte bound.
  std::uint64_t disk_bytes = 0;      ///< Gauge: bytes of entries on disk (as this process knows it).
  // A tier shared by several hosts (Redis); all zero without one.
  std::uint64_t shared_hits = 0;         ///< Lookups answered by the shared tier.
  std::uint64_t shared_misses = 0;       ///< Lookups the shared tier could not answer (errors included).
  std::uint64_t shared_writes = 0;       ///< Entries written to the shared tier.
  std::uint64_t shared_errors = 0;       ///< Commands that failed or timed out, and calls skipped while it was down.
  std::uint64_t shared_corrupt = 0;      ///< Values found invalid or foreign, deleted, and recomputed.
  std::uint64_t shared_lease_waits = 0;  ///< Leaders that waited for another host's lease on the key.
  std::uint64_t shared_lease_takeovers = 0;  ///< Leases taken after another host's lease lapsed without a value.
};

struct ServiceStats {
  // Counters.
  std::uint64_t hits = 0;            ///< Memory-tier hits.
  std::uint64_t misses = 0;          ///< Leaders: cacheable lookups that missed memory and were not merged.
  std::uint64_t merged = 0;          ///< Followers that waited on a same-key leader.
  std::uint64_t failed = 0;          ///< Leader encodes (or revalidations) that failed.
  std::uint64_t uncacheable = 0;     ///< Requests whose input had no cache key.
  std::uint64_t timeouts = 0;        ///< Callers that gave up at their deadline or the follower timeout.
  std::uint64_t cancelled = 0;       ///< Callers that gave up on a stop request (CallOptions::stop).
  std::uint64_t abandoned = 0;       ///< Loads whose every caller gave up: stopped or discarded, never cached.
  std::uint64_t evictions = 0;       ///< Memory-tier evictions.
  std::uint64_t oversize = 0;        ///< Artifacts returned but too large to cache.
  std::uint64_t loads = 0;           ///< Leader loads finished, successful or not (Caffeine's load count).
  std::uint64_t load_ns = 0;         ///< Time of those loads: second-tier lookup, encode, store, revalidate.
  std::uint64_t encode_ns = 0;       ///< Time spent in encodes (leaders' and uncacheable requests').
  std::uint64_t batches = 0;         ///< Successful encode_batch calls (M4b).
  std::uint64_t batched_items = 0;   ///< Items encoded by successful encode_batch calls.
  std::uint64_t failed_batches = 0;  ///< encode_batch calls that failed (their items were retried alone).
  /// batch_sizes[i] = number of successful batches of size i+1 (larger sizes go in the last).
  std::array<std::uint64_t, 16> batch_sizes{};
  std::uint64_t batch_length_units = 0;  ///< Successful batches: sum of size x longest input length.
  std::uint64_t batch_padded_units = 0;  ///< The part of batch_length_units that is padding.
  // Gauges.
  std::uint64_t entries = 0;  ///< Memory-tier entries now.
  std::uint64_t bytes = 0;    ///< Memory-tier bytes now (sum of stored_bytes of entries).
  // Second tier.
  TierStats tier;

  /// Mean time of a leader load (load_ns / loads), 0 when there was none: the miss penalty.
  std::uint64_t mean_miss_penalty_ns() const noexcept { return loads ? load_ns / loads : 0; }

  /// Counters of this snapshot minus those of `earlier`, clamped at 0; gauges are this snapshot's.
  ServiceStats minus(const ServiceStats& earlier) const;
  ServiceStats operator-(const ServiceStats& earlier) const { return minus(earlier); }

  /// (name, value) pairs in a fixed order, for printing and JSON (batch histogram excluded; the mean
  /// miss penalty included as `mean_miss_penalty_ns`).
  std::vector<std::pair<std::string, std::uint64_t>> fields() const;
};

}  // namespace refenc
