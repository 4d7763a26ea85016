#include "profile/verdict/compare.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "profile/record/cell_groups.hpp"
#include "profile/stats/mann_whitney.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/stats/throughput.hpp"
#include "profile/verdict/aa_spread.hpp"
#include "profile/verdict/contamination_rule.hpp"
#include "profile/verdict/noise_floor.hpp"

namespace refenc::profile {
namespace {

/// One side's groups by label: the cells and requests of every run pooled, and the group per run
/// (absent where a run lacks it).
struct SideGroup {
  CellGroup pooled;
  std::vector<const CellGroup*> per_run;
};

std::map<std::string, SideGroup> side_groups(const std::vector<std::map<GroupKey, CellGroup>>& runs) {
  std::map<std::string, SideGroup> out;
  for (const auto& groups : runs)
    for (const auto& [key, g] : groups) {
      SideGroup& s = out[key.label()];
      s.pooled.key = key;
      s.pooled.cells.insert(s.pooled.cells.end(), g.cells.begin(), g.cells.end());
      s.pooled.requests.insert(s.pooled.requests.end(), g.requests.begin(), g.requests.end());
      s.per_run.push_back(&g);
    }
  return out;
}

/// The metric of one run's group.
double run_value(const CellGroup& g, CompareMetric metric) {
  std::vector<RequestRecord> rows;
  rows.reserve(g.requests.size());
  for (const RequestRecord* r : g.requests) rows.push_back(*r);
  return metric_value(rows, g.wall_s(), metric);
}

}  // namespace

CompareResult compare_runs(const RunRecord& baseline, const RunRecord& current, const CompareOptions& options) {
  return compare_run_sets({&baseline}, {&current}, options);
}

CompareResult compare_run_sets(const std::vector<const RunRecord*>& baseline,
                               const std::vector<const RunRecord*>& current, const CompareOptions& options) {
  CompareResult result;
  result.threshold = options.threshold;
  result.alpha = options.alpha;
  result.min_runs_for_test = options.min_runs_for_test;
  result.min_change_s = options.min_change_s;
  result.judge_contaminated = options.judge_contaminated;
  std::vector<std::map<GroupKey, CellGroup>> base_groups, cur_groups;
  for (const RunRecord* r : baseline) base_groups.push_back(group_cells(*r));
  for (const RunRecord* r : current) cur_groups.push_back(group_cells(*r));
  auto base = side_groups(base_groups), cur = side_groups(cur_groups);
  BootstrapOptions bo{options.resamples, options.seed, 0.95};
  const bool test = static_cast<int>(baseline.size()) >= options.min_runs_for_test &&
                    static_cast<int>(current.size()) >= options.min_runs_for_test;
  const AaEvidence aa = aa_evidence(baseline, current);
  for (const auto& [label, cs] : cur) {
    const CellGroup& c = cs.pooled;
    auto bit = base.find(label);
    if (bit == base.end()) {
      result.unmatched.push_back(c.key);
      continue;
    }
    const CellGroup& b = bit->second.pooled;
    CellChange change{c.key, {}, false};
    change.contaminated = any_contaminated(b.cells) || any_contaminated(c.cells);
    // Per-run figures, the noise floor, and the U test; `worse` is +1 when a larger value is worse.
    auto judge = [&](MetricChange& mc, double worse) {
      for (const CellGroup* g : bit->second.per_run) mc.baseline_runs.push_back(run_value(*g, mc.metric));
      for (const CellGroup* g : cs.per_run) mc.current_runs.push_back(run_value(*g, mc.metric));
      NoiseFloor f = noise_floor(c.key, mc.metric, aa, mc.baseline_runs, mc.current_runs, options.floor_confidence);
      mc.noise_floor = f.value;
      mc.noise_source = f.source;
      if (test) {
        std::vector<double> x, y;  // oriented so that "y larger" is worse
        for (double v : mc.baseline_runs) x.push_back(worse * v);
        for (double v : mc.current_runs) y.push_back(worse * v);
        mc.p_value = mann_whitney_greater(x, y);
      }
      const Interval& ch = mc.change;
      const double size = worse * ch.point;
      const bool excludes_zero = worse > 0 ? ch.lo > 0 : ch.hi < 0;
      const bool large =
          mc.metric == CompareMetric::throughput || std::abs(mc.current - mc.baseline) >= options.min_change_s;
      mc.regression = size > options.threshold && size > mc.noise_floor && excludes_zero && large &&
                      (!test || mc.p_value <= options.alpha) && (options.judge_contaminated || !change.contaminated);
    };
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
      MetricChange mc{m.metric, percentile(xb, p), percentile(xc, p), ch, false};
      judge(mc, 1.0);
      if (m.metric == CompareMetric::p50_preprocessing) mc.regression = false;  // reported, never flagged
      change.regression = change.regression || mc.regression;
      change.metrics.push_back(std::move(mc));
    }
    ThroughputPool tb = b.throughput_pool(), tc = c.throughput_pool();
    if (!tb.e2e.empty() && !tc.e2e.empty() && tb.wall_s > 0 && tc.wall_s > 0) {
      MetricChange mc{CompareMetric::throughput, tb.throughput(), tc.throughput(), throughput_change(tb, tc, bo),
                      false};
      judge(mc, -1.0);
      change.regression = change.regression || mc.regression;
      change.metrics.push_back(std::move(mc));
    }
    ++result.matched;
    if (change.regression) ++result.regressions;
    if (change.contaminated) ++result.contaminated;
    result.cells.push_back(std::move(change));
  }
  for (const auto& [label, b] : base)
    if (!cur.count(label)) result.unmatched.push_back(b.pooled.key);
  for (const RunRecord* r : baseline) result.baseline_dirs.push_back(r->dir);
  for (const RunRecord* r : current) result.current_dirs.push_back(r->dir);
  result.baseline_dir = baseline.empty() ? "" : baseline[0]->dir;
  result.current_dir = current.empty() ? "" : current[0]->dir;
  if (!baseline.empty()) result.baseline_evidence = baseline[0]->models;
  result.method = fmt::format(
      "relative change current/baseline - 1 over each side's runs pooled (repeats pooled); 95% percentile "
      "bootstrap over requests; a regression is worse than the threshold (a latency by at least {} ms), beyond "
      "the noise floor (the largest of: the group's "
      "A/A spread in either side's runs; the {:g}% prediction bound of a pooled A/A pair, scaled to the runs a side; "
      "the between-run spread |run / median - 1| of a side with two runs or more), with an interval that excludes no "
      "change, and, when each side has at least {} runs, a "
      "one-sided Mann-Whitney U test over per-run figures at p <= {}",
      1000 * options.min_change_s, 100 * options.floor_confidence, options.min_runs_for_test, options.alpha);
  return result;
}

}  // namespace refenc::profile
