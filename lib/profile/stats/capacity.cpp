#include "profile/stats/capacity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "profile/stats/percentile.hpp"

namespace refenc::profile {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

std::vector<double> rates_of(std::span<const SweepStep> steps) {
  std::vector<double> r;
  for (const auto& s : steps) r.push_back(s.rate_per_s);
  return r;
}

double capacity_of(std::span<const std::vector<double>> samples, std::span<const double> rates, double slo_s) {
  std::vector<RatePoint> points;
  for (std::size_t i = 0; i < rates.size(); ++i) points.push_back({rates[i], p95_ttfa(samples[i]) <= slo_s});
  return capacity_at_slo(points);
}

std::vector<std::vector<double>> samples_of(std::span<const SweepStep> steps) {
  std::vector<std::vector<double>> out;
  for (const auto& s : steps) out.push_back(s.ttfa_s);
  return out;
}

}  // namespace

double p95_ttfa(std::span<const double> ttfa_s) {
  return ttfa_s.empty() ? inf : percentile(ttfa_s, capacity_percentile);
}

std::vector<RatePoint> to_points(std::span<const SweepStep> steps, double slo_s) {
  std::vector<RatePoint> points;
  for (const auto& s : steps) points.push_back({s.rate_per_s, p95_ttfa(s.ttfa_s) <= slo_s});
  return points;
}

double capacity_at_slo(std::span<const RatePoint> points) {
  double lowest_fail = inf;
  for (const auto& p : points)
    if (!p.meets) lowest_fail = std::min(lowest_fail, p.rate_per_s);
  double best = 0;
  for (const auto& p : points)
    if (p.meets && p.rate_per_s < lowest_fail) best = std::max(best, p.rate_per_s);
  return best;
}

double capacity_at_slo(std::span<const SweepStep> steps, double slo_s) {
  return capacity_at_slo(to_points(steps, slo_s));
}

bool capacity_censored(std::span<const RatePoint> points) {
  return std::all_of(points.begin(), points.end(), [](const RatePoint& p) { return p.meets; });
}

Interval capacity_interval(std::span<const SweepStep> steps, double slo_s, const BootstrapOptions& options) {
  const std::vector<double> rates = rates_of(steps);
  const auto samples = samples_of(steps);
  return bootstrap_many(
      samples, [&](std::span<const std::vector<double>> s) { return capacity_of(s, rates, slo_s); }, options);
}

Interval capacity_change(std::span<const SweepStep> a, std::span<const SweepStep> b, double slo_s,
                         const BootstrapOptions& options) {
  std::vector<double> rates_a = rates_of(a), rates_b = rates_of(b);
  auto samples = samples_of(a);
  for (auto& s : samples_of(b)) samples.push_back(std::move(s));
  const std::size_t na = a.size();
  return bootstrap_many(
      samples,
      [&](std::span<const std::vector<double>> s) {
        double ca = capacity_of(s.subspan(0, na), rates_a, slo_s), cb = capacity_of(s.subspan(na), rates_b, slo_s);
        if (ca > 0) return cb / ca - 1.0;
        return cb > 0 ? inf : 0.0;
      },
      options);
}

std::optional<double> next_search_rate(std::span<const RatePoint> done, const RateSearch& search) {
  if (done.empty()) return search.start_rate_per_s;
  if (static_cast<int>(done.size()) >= search.max_steps) return std::nullopt;
  double lowest_fail = inf, highest = 0;
  for (const auto& p : done) {
    highest = std::max(highest, p.rate_per_s);
    if (!p.meets) lowest_fail = std::min(lowest_fail, p.rate_per_s);
  }
  if (lowest_fail == inf) {
    if (highest >= search.max_rate_per_s) return std::nullopt;
    return std::min(2 * highest, search.max_rate_per_s);
  }
  const double best = capacity_at_slo(done);
  if (best == 0) {
    const double lower = lowest_fail / 2;
    if (lower < search.start_rate_per_s / 1024) return std::nullopt;
    return lower;
  }
  if (lowest_fail - best <= search.precision * lowest_fail) return std::nullopt;
  return (best + lowest_fail) / 2;
}

}  // namespace refenc::profile
