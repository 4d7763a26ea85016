#include "profile/verdict/aa_spread.hpp"

#include <cmath>
#include <map>

#include "profile/stats/percentile.hpp"

namespace refenc::profile {

double metric_value(const std::vector<RequestRecord>& requests, double wall_s, CompareMetric metric) {
  switch (metric) {
    case CompareMetric::throughput: {
      std::size_t ok = 0;
      for (const RequestRecord& r : requests) ok += r.ok() ? 1 : 0;
      return wall_s > 0 ? static_cast<double>(ok) / wall_s : 0.0;
    }
    case CompareMetric::p50_preprocessing: {
      auto x = stage_samples(requests, Stage::preprocessing);
      return x.empty() ? 0.0 : percentile(x, 50);
    }
    case CompareMetric::p95_e2e: {
      auto x = stage_samples(requests, Stage::e2e);
      return x.empty() ? 0.0 : percentile(x, 95);
    }
    case CompareMetric::p95_encode: {
      auto x = stage_samples(requests, Stage::encode);
      return x.empty() ? 0.0 : percentile(x, 95);
    }
  }
  return 0.0;
}

const std::vector<CompareMetric>& compared_metrics() {
  static const std::vector<CompareMetric> all{CompareMetric::p50_preprocessing, CompareMetric::p95_e2e,
                                              CompareMetric::p95_encode, CompareMetric::throughput};
  return all;
}

std::vector<AaSpread> aa_spread(const RunRecord& run) {
  std::map<std::pair<GroupKey, int>, AaSpread> rows;
  std::map<CellKey, const Cell*> cells;
  for (const Cell& c : run.cells) cells[c.key] = &c;
  for (const Cell& twin : run.aa_cells) {
    auto it = cells.find(twin.key);
    if (it == cells.end()) continue;
    const auto& a = run.requests_of(twin.key);
    const auto& b = run.aa_requests_of(twin.key);
    if (a.empty() || b.empty()) continue;
    for (std::size_t m = 0; m < compared_metrics().size(); ++m) {
      CompareMetric metric = compared_metrics()[m];
      double x = metric_value(a, it->second->wall_s, metric), y = metric_value(b, twin.wall_s, metric);
      if (!(x > 0)) continue;
      AaSpread& row = rows[{twin.key.group(), static_cast<int>(m)}];
      row.group = twin.key.group();
      row.metric = std::string(to_string(metric));
      row.differences.push_back(std::abs(y / x - 1.0));
      row.spread = std::max(row.spread, row.differences.back());
      if (y > 0) row.log_ratios.push_back(std::log(y / x));
    }
  }
  std::vector<AaSpread> out;
  for (auto& [k, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace refenc::profile
