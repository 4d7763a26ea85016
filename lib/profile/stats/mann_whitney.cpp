#include "profile/stats/mann_whitney.hpp"

#include <cmath>
#include <vector>

namespace refenc::profile {
namespace {

/// U of `y` over `x`: pairs with y > x, ties one half (in halves, to stay integral).
long twice_u(const std::vector<double>& x, const std::vector<double>& y) {
  long u = 0;
  for (double a : x)
    for (double b : y) u += b > a ? 2 : b == a ? 1 : 0;
  return u;
}

}  // namespace

double mann_whitney_greater(std::span<const double> xs, std::span<const double> ys) {
  const std::size_t n = xs.size(), m = ys.size();
  if (n == 0 || m == 0) return 1.0;
  std::vector<double> x(xs.begin(), xs.end()), y(ys.begin(), ys.end());
  const long observed = twice_u(x, y);
  std::vector<double> pool(x);
  pool.insert(pool.end(), y.begin(), y.end());
  const std::size_t total = n + m;
  if (total <= 20) {
    // Every split: bit i set = pooled value i goes to y.
    long long at_least = 0, splits = 0;
    std::vector<double> sx, sy;
    for (unsigned long mask = 0; mask < (1ul << total); ++mask) {
      if (static_cast<std::size_t>(__builtin_popcountl(mask)) != m) continue;
      sx.clear();
      sy.clear();
      for (std::size_t i = 0; i < total; ++i) ((mask >> i) & 1ul ? sy : sx).push_back(pool[i]);
      ++splits;
      if (twice_u(sx, sy) >= observed) ++at_least;
    }
    return static_cast<double>(at_least) / static_cast<double>(splits);
  }
  const double nn = static_cast<double>(n), mm = static_cast<double>(m);
  const double mu = nn * mm / 2, sd = std::sqrt(nn * mm * (nn + mm + 1) / 12);
  const double z = (static_cast<double>(observed) / 2 - mu - 0.5) / sd;
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace refenc::profile
