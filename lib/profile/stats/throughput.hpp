// Throughput of a pool of requests (the cells of one model/arm/phase/concurrency, repeats pooled) and
// its bootstrap intervals: the one construction the gate, compare and the HTML page all use.
//
// Throughput is successful requests / summed wall time of the pooled cells. A bootstrap replicate
// resamples the requests' E2E latencies and scales the observed throughput by mean E2E / resampled
// mean E2E (Little's law at fixed concurrency). Indices, quantiles and seeds are bootstrap.hpp's.
//
//   ThroughputPool a{.e2e = m4a_e2e, .ok = 100, .wall_s = 16.5}, b{.e2e = m4b_e2e, .ok = 100, .wall_s = 43.3};
//   Interval one = throughput_interval(a, {.resamples = 2000, .seed = 7});    // req/s
//   Interval gain = throughput_change(a, b, {.resamples = 2000, .seed = 7});  // b / a - 1
#pragma once

#include <cstddef>
#include <vector>

#include "profile/stats/bootstrap.hpp"

namespace refenc::profile {

/// Pooled requests of one group of cells.
struct ThroughputPool {
  std::vector<double> e2e;  ///< E2E latency of each successful request (seconds).
  std::size_t ok = 0;       ///< Successful requests.
  double wall_s = 0;        ///< Summed wall time of the pooled cells.

  /// Successful requests per second of wall time; 0 without wall time.
  double throughput() const { return wall_s > 0 ? static_cast<double>(ok) / wall_s : 0.0; }
};

/// Interval of one pool's throughput (req/s). Needs a non-empty `e2e`; throws Error(config) otherwise.
Interval throughput_interval(const ThroughputPool& pool, const BootstrapOptions& options);

/// Interval of the relative change tput(b) / tput(a) - 1 (point 0 when a has no throughput). Needs
/// both `e2e` non-empty; throws Error(config) otherwise.
Interval throughput_change(const ThroughputPool& a, const ThroughputPool& b, const BootstrapOptions& options);

}  // namespace refenc::profile
