// Percentiles and summaries of latency samples, by the nearest-rank method.
//
// Nearest rank: sort the n samples ascending; the p-th percentile (0 < p <= 100) is the sample at
// 1-based rank ceil(p / 100 * n); p = 0 gives the minimum. Every reported value is therefore a sample
// that occurred, and anyone can reproduce it from requests.jsonl with a sort.
//
//   std::vector<double> v{0.3, 0.1, 0.2};
//   double p50 = refenc::profile::percentile(v, 50);             // 0.2
//   refenc::profile::Summary s = refenc::profile::summarize(v);   // count, mean, p50 ... max
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace refenc::profile {

/// Nearest-rank percentile of `samples` (unsorted), p in [0, 100]. Throws Error(config) for an empty
/// sample or p out of range.
double percentile(std::span<const double> samples, double p);

/// Nearest-rank percentile of samples already sorted ascending.
double percentile_sorted(std::span<const double> sorted, double p);

/// Distribution summary of one stage's latency (seconds).
struct Summary {
  std::size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};

/// Arithmetic mean; 0 for an empty sample.
double mean(std::span<const double> samples);

/// Summary of `samples`; all zero when empty.
Summary summarize(std::span<const double> samples);

/// Smallest sample count at which the nearest-rank p-th percentile rests on at least `tail` samples at
/// or above it (used for the "tail rests on fewer than 100 samples" warning: p99 needs 100 * 100).
std::size_t samples_needed(double p, std::size_t tail = 1);

}  // namespace refenc::profile
