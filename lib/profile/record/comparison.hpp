// The result of comparing two runs group by group (model/arm/phase/concurrency, repeats pooled): per
// metric the baseline and current value, the relative change with its bootstrap interval, and whether
// it is a regression.
//
//   for (const CellChange& c : result.cells)
//     for (const MetricChange& m : c.metrics) if (m.regression) std::cout << c.group.label() << ' ' << to_string(m.metric);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "profile/record/cell_key.hpp"
#include "profile/record/run_record.hpp"
#include "profile/stats/bootstrap.hpp"

namespace refenc::profile {

/// The compared metrics, in the order they are printed.
enum class CompareMetric { p50_preprocessing, p95_e2e, p95_encode, throughput };

/// "p50_preprocessing", "p95_e2e", "p95_encode", "throughput".
std::string_view to_string(CompareMetric m) noexcept;

/// One metric of one group.
struct MetricChange {
  CompareMetric metric = CompareMetric::p95_e2e;
  double baseline = 0, current = 0;  ///< Seconds, or req/s for throughput.
  Interval change;                   ///< current / baseline - 1.
  bool regression = false;
  std::vector<double> baseline_runs, current_runs;  ///< The metric per run, each side in the order given.
  double noise_floor = 0;    ///< Relative change the runs' own noise reaches (A/A spread, between-run spread).
  std::string noise_source;  ///< What the floor came from, e.g. "A/A 4.1% (2 pairs); between runs 3.0%".
  double p_value = -1;       ///< One-sided Mann-Whitney U over per-run figures; -1 when not applied.
};

/// Every metric of one matched group.
struct CellChange {
  GroupKey group;  ///< Repeats pooled; printed as its label, "model/arm/phase/c8".
  std::vector<MetricChange> metrics;
  bool regression = false;
  /// Some cell of the group, on either side, stayed contaminated (verdict/contamination_rule.hpp).
  bool contaminated = false;
};

/// The comparison of two runs.
struct CompareResult {
  double threshold = 0.10;
  std::vector<CellChange> cells;
  std::vector<GroupKey> unmatched;  ///< Groups in one run only.
  int regressions = 0;
  int matched = 0;
  std::string baseline_dir, current_dir;
  std::vector<ModelEntry> baseline_evidence;  ///< The baseline's models (grades, scales).
  std::string method;
  std::vector<std::string> baseline_dirs, current_dirs;  ///< Every run on each side (the first is *_dir).
  double alpha = 0.05;                                   ///< The U test's level.
  int min_runs_for_test = 3;                             ///< Runs each side needs before the U test applies.
  double min_change_s = 0.001;                           ///< Smallest latency change that can be a regression.
  int contaminated = 0;                                  ///< Matched groups with a contaminated cell on either side.
  bool judge_contaminated = false;                       ///< Whether they were judged (else they decide nothing).
};

}  // namespace refenc::profile
