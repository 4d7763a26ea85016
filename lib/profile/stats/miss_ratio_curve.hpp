// Miss-ratio curve: the hit ratio an LRU memory tier would have at every byte bound, from one pass
// over a request trace (Mattson's stack distances, weighted by entry size).
//
// For each request of a key seen before, its reuse distance is the number of distinct keys, and the
// sum of their stored bytes, requested since that key's previous request (the key itself included).
// An LRU bounded by `max_items` entries and `max_bytes` bytes hits exactly when both distances fit
// its bounds, provided no entry was evicted out of recency order: exact for equal-size entries, and
// an upper bound on the hits when a large entry's eviction took smaller ones with it. A key's first
// request is a compulsory miss at every size.
//
//   std::vector<TraceAccess> trace = {{"a", 100}, {"b", 100}, {"a", 100}};
//   MissRatioCurve mrc = miss_ratio_curve(trace);
//   mrc.hit_ratio(200);               // 1/3: the second "a" hits once 200 bytes fit {a, b}
//   mrc.hit_ratio(100);               // 0
//   mrc.points(8);                    // (bytes, hit ratio) at 8 sizes up to the working set
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace refenc::profile {

/// One request of a trace: the cache key (any stable string) and its entry's stored bytes.
struct TraceAccess {
  std::string key;
  std::uint64_t bytes = 0;
};

class MissRatioCurve {
 public:
  /// Number of requests in the trace.
  std::size_t requests() const noexcept { return requests_; }
  /// Distinct keys (compulsory misses).
  std::size_t distinct() const noexcept { return distinct_; }
  /// Bytes of all distinct keys: a tier this large (and with as many items) misses only compulsorily.
  std::uint64_t working_set_bytes() const noexcept { return working_set_bytes_; }

  /// Hit ratio (0..1) of an LRU with these bounds over the trace.
  double hit_ratio(std::uint64_t max_bytes, std::size_t max_items = std::numeric_limits<std::size_t>::max()) const;

  /// `n` points (bytes, hit ratio), byte bounds evenly spaced from working_set / n to working_set.
  std::vector<std::pair<std::uint64_t, double>> points(
      std::size_t n, std::size_t max_items = std::numeric_limits<std::size_t>::max()) const;

  /// Reuse distances of the requests that were not first requests: (distinct keys, bytes).
  const std::vector<std::pair<std::size_t, std::uint64_t>>& reuses() const noexcept { return reuses_; }

 private:
  friend MissRatioCurve miss_ratio_curve(const std::vector<TraceAccess>& trace);
  std::size_t requests_ = 0;
  std::size_t distinct_ = 0;
  std::uint64_t working_set_bytes_ = 0;
  std::vector<std::pair<std::size_t, std::uint64_t>> reuses_;
};

/// The curve of `trace`, in O(n log n). A key's size is that of its latest request.
MissRatioCurve miss_ratio_curve(const std::vector<TraceAccess>& trace);

}  // namespace refenc::profile
