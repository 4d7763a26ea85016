#include "profile/verdict/compare.hpp"

#include <map>

#include "profile/record/cell_groups.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/stats/throughput.hpp"

namespace refenc::profile {
namespace {

/// Groups by label, so that groups compare (and print) in the label's order.
std::map<std::string, CellGroup> by_label(const RunRecord& run) {
  std::map<std::string, CellGroup> out;
  for (auto& [key, g] : group_cells(run)) out.emplace(key.label(), std::move(g));
  return out;
}

}  // namespace

CompareResult compare_runs(const RunRecord& baseline, const RunRecord& current, const CompareOptions& options) {
  CompareResult result;
  result.threshold = options.threshold;
  auto base = by_label(baseline), cur = by_label(current);
  BootstrapOptions bo{options.resamples, options.seed, 0.95};
  for (const auto& [key, c] : cur) {
    auto bit = base.find(key);
    if (bit == base.end()) {
      result.unmatched.push_back(c.key);
      continue;
    }
    const CellGroup& b = bit->second;
    CellChange change{c.key, {}, false};
    struct Metric {
      CompareMetric metric;
      Stage stage;
      double p;
    };
    for (const Metric& m :
         {Metric{CompareMetric::p50_preprocessing, Stage::preprocessing, 50},
          Metric{CompareMetric::p95_e2e, Stage::e2e, 95}, Metric{CompareMetric::p95_encode, Stage::encode, 95}}) {
      auto xb = b.samples(m.stage), xc = c.samples(m.stage);
      if (xb.empty() || xc.empty()) continue;
      double p = m.p;
      Interval ch = bootstrap_pair(
          xb, xc,
          [p](std::span<const double> x, std::span<const double> y) {
            double bx = percentile(x, p);
            return bx > 0 ? percentile(y, p) / bx - 1.0 : 0.0;
          },
          bo);
      bool reg = m.metric != CompareMetric::p50_preprocessing && ch.point > options.threshold && ch.lo > 0;
      change.regression = change.regression || reg;
      change.metrics.push_back({m.metric, percentile(xb, p), percentile(xc, p), ch, reg});
    }
    ThroughputPool tb = b.throughput_pool(), tc = c.throughput_pool();
    if (!tb.e2e.empty() && !tc.e2e.empty() && tb.wall_s > 0 && tc.wall_s > 0) {
      Interval ch = throughput_change(tb, tc, bo);
      bool reg = ch.point < -options.threshold && ch.hi < 0;
      change.regression = change.regression || reg;
      change.metrics.push_back({CompareMetric::throughput, tb.throughput(), tc.throughput(), ch, reg});
    }
    ++result.matched;
    if (change.regression) ++result.regressions;
    result.cells.push_back(std::move(change));
  }
  for (const auto& [key, b] : base)
    if (!cur.count(key)) result.unmatched.push_back(b.key);
  result.baseline_dir = baseline.dir;
  result.current_dir = current.dir;
  result.baseline_evidence = baseline.models;
  result.method = "relative change current/baseline - 1; 95% percentile bootstrap over requests, repeats pooled";
  return result;
}

}  // namespace refenc::profile
