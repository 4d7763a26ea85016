#include "profile/stats/throughput.hpp"

#include "profile/stats/percentile.hpp"

namespace refenc::profile {

Interval throughput_interval(const ThroughputPool& pool, const BootstrapOptions& options) {
  double t = pool.throughput(), m = mean(pool.e2e);
  return bootstrap_one(
      pool.e2e,
      [&](std::span<const double> x) {
        double mx = mean(x);
        return mx > 0 ? t * m / mx : t;
      },
      options);
}

Interval throughput_change(const ThroughputPool& a, const ThroughputPool& b, const BootstrapOptions& options) {
  double ta = a.throughput(), tb = b.throughput(), ma = mean(a.e2e), mb = mean(b.e2e);
  Interval i = bootstrap_pair(
      a.e2e, b.e2e,
      [&](std::span<const double> x, std::span<const double> y) {
        double rx = ta * ma / mean(x), ry = tb * mb / mean(y);
        return ry / rx - 1.0;
      },
      options);
  i.point = ta > 0 ? tb / ta - 1.0 : 0.0;
  return i;
}

}  // namespace refenc::profile
