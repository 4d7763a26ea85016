// Compare: per-group changes between a baseline run and a current run, with bootstrap intervals, and
// the regressions a nightly job should fail on.
//
// Cells are matched by model/arm/phase/concurrency (repeats pooled). For each: relative change of p95
// E2E, p95 reference encode and p50 preprocessing (current / baseline - 1) with seeded percentile-
// bootstrap intervals, and of throughput (stats/throughput.hpp). A regression is a change worse than
// `threshold` (slower p95 E2E or p95 encode, or lower throughput) whose interval excludes zero, that
// clears the noise floor (noise_floor.hpp: A/A twins, pooled A/A bound, between-run spread) and, with at least
// `min_runs_for_test` runs on each side, a one-sided Mann-Whitney U test over the per-run figures.
//
//   CompareResult c = compare_runs(load_run_with_requests(base), load_run_with_requests(cur), {.threshold = 0.10});
//   int exit_code = c.regressions > 0 ? compare_exit_regression : 0;
#pragma once

#include <cstdint>
#include <vector>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// How `compare_runs` judges a change.
struct CompareOptions {
  double threshold = 0.10;    ///< Relative change beyond which a significant change is a regression.
  int resamples = 2000;       ///< Bootstrap resamples per metric.
  std::uint64_t seed = 1;     ///< Seeds every metric's bootstrap (the same seed for each).
  double alpha = 0.05;        ///< Level of the one-sided Mann-Whitney U test over per-run figures.
  int min_runs_for_test = 3;  ///< Runs each side needs before the U test applies (3 + 3 can reach p = 0.05).
  /// Smallest latency change (seconds, |current - baseline|) that can be a regression: practical
  /// significance, so that a few microseconds on a memory hit never fail a nightly job.
  double min_change_s = 0.001;
  /// Two-sided level of the pooled A/A bound in the noise floor (noise_floor.hpp).
  double floor_confidence = 0.99;
  /// false: a group with a cell that stayed contaminated on either side decides nothing (no regression).
  bool judge_contaminated = false;
};

/// Compares `current` against `baseline`, group by group.
CompareResult compare_runs(const RunRecord& baseline, const RunRecord& current, const CompareOptions& options);

/// Compares several current runs against several baseline runs (each side pooled; per-run figures for
/// the noise floor and the U test).
CompareResult compare_run_sets(const std::vector<const RunRecord*>& baseline,
                               const std::vector<const RunRecord*>& current, const CompareOptions& options);

}  // namespace refenc::profile
