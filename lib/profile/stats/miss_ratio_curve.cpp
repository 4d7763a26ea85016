#include "profile/stats/miss_ratio_curve.hpp"

#include <algorithm>
#include <unordered_map>

namespace refenc::profile {

namespace {

/// Fenwick tree over request positions: sums of a per-position value.
template <class T>
class Fenwick {
 public:
  explicit Fenwick(std::size_t n) : tree_(n + 1, T{}) {}
  void add(std::size_t i, T v) {
    for (++i; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
  }
  /// Sum over positions [0, i).
  T prefix(std::size_t i) const {
    T s{};
    for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
    return s;
  }

 private:
  std::vector<T> tree_;
};

}  // namespace

MissRatioCurve miss_ratio_curve(const std::vector<TraceAccess>& trace) {
  MissRatioCurve mrc;
  mrc.requests_ = trace.size();
  // Each key is counted at the position of its latest request: one item and its bytes there.
  Fenwick<std::int64_t> items(trace.size());
  Fenwick<std::int64_t> bytes(trace.size());
  struct Last {
    std::size_t position;
    std::uint64_t bytes;
  };
  std::unordered_map<std::string, Last> last;
  last.reserve(trace.size());
  for (std::size_t t = 0; t < trace.size(); ++t) {
    const TraceAccess& a = trace[t];
    auto it = last.find(a.key);
    if (it != last.end()) {
      const std::size_t p = it->second.position;
      // Distinct keys requested after p and before t, then this key itself.
      const auto between_items = items.prefix(t) - items.prefix(p + 1);
      const auto between_bytes = bytes.prefix(t) - bytes.prefix(p + 1);
      mrc.reuses_.emplace_back(static_cast<std::size_t>(between_items) + 1,
                               static_cast<std::uint64_t>(between_bytes) + a.bytes);
      items.add(p, -1);
      bytes.add(p, -static_cast<std::int64_t>(it->second.bytes));
      mrc.working_set_bytes_ -= it->second.bytes;
      it->second = {t, a.bytes};
    } else {
      last.emplace(a.key, Last{t, a.bytes});
      ++mrc.distinct_;
    }
    items.add(t, 1);
    bytes.add(t, static_cast<std::int64_t>(a.bytes));
    mrc.working_set_bytes_ += a.bytes;
  }
  return mrc;
}

double MissRatioCurve::hit_ratio(std::uint64_t max_bytes, std::size_t max_items) const {
  if (requests_ == 0) return 0;
  std::size_t hits = 0;
  for (const auto& [n, b] : reuses_) hits += (n <= max_items && b <= max_bytes) ? 1 : 0;
  return static_cast<double>(hits) / static_cast<double>(requests_);
}

std::vector<std::pair<std::uint64_t, double>> MissRatioCurve::points(std::size_t n, std::size_t max_items) const {
  std::vector<std::pair<std::uint64_t, double>> out;
  if (n == 0 || working_set_bytes_ == 0) return out;
  // Hits at a bound = reuses with bytes <= bound (and items within max_items): one sort, then a walk.
  std::vector<std::uint64_t> fits;
  fits.reserve(reuses_.size());
  for (const auto& [k, b] : reuses_)
    if (k <= max_items) fits.push_back(b);
  std::sort(fits.begin(), fits.end());
  for (std::size_t i = 1; i <= n; ++i) {
    const std::uint64_t bound = working_set_bytes_ * i / n;
    const auto hits = std::upper_bound(fits.begin(), fits.end(), bound) - fits.begin();
    out.emplace_back(bound, static_cast<double>(hits) / static_cast<double>(requests_));
  }
  return out;
}

}  // namespace refenc::profile
