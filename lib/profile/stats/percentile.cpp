#include "profile/stats/percentile.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace refenc::profile {

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw Error(ErrorKind::config, "percentile of an empty sample");
  if (!(p >= 0 && p <= 100)) throw Error(ErrorKind::config, "percentile p must be in [0, 100]");
  if (p == 0) return sorted.front();
  auto n = static_cast<double>(sorted.size());
  // Guard against p/100*n landing a hair above an integer through rounding (e.g. 0.95 * 20).
  double rank = std::ceil(p / 100.0 * n - 1e-9);
  auto idx = static_cast<std::size_t>(std::clamp(rank, 1.0, n)) - 1;
  return sorted[idx];
}

double percentile(std::span<const double> samples, double p) {
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, p);
}

double mean(std::span<const double> samples) {
  return samples.empty() ? 0.0
                         : std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  s.count = v.size();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.p50 = percentile_sorted(v, 50);
  s.p90 = percentile_sorted(v, 90);
  s.p95 = percentile_sorted(v, 95);
  s.p99 = percentile_sorted(v, 99);
  s.max = v.back();
  return s;
}

std::size_t samples_needed(double p, std::size_t tail) {
  return static_cast<std::size_t>(std::ceil(100.0 * static_cast<double>(tail) / (100.0 - p) - 1e-9));
}

}  // namespace refenc::profile
