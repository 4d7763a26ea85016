// Compare: per-cell changes between a baseline run and a current run, with bootstrap intervals, and
// the regressions a nightly job should fail on.
//
// Cells are matched by model/arm/phase/concurrency (repeats pooled). For each: relative change of p95
// E2E, p95 reference encode and p50 preprocessing (current / baseline - 1) with seeded percentile-
// bootstrap intervals, and of throughput. A regression is a change worse than `threshold` whose
// interval excludes zero (slower p95 E2E or p95 encode, or lower throughput).
//
//   CompareResult c = compare_runs(load_run(base), load_run(cur), {.threshold = 0.10});
//   std::cout << format_compare(c);   // exit code: c.regressions ? 10 : 0
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "profile/run_report.hpp"

namespace refenc::profile {

struct CompareOptions {
  double threshold = 0.10;  ///< Relative change beyond which a significant change is a regression.
  int resamples = 2000;
  std::uint64_t seed = 1;
};

struct CompareResult {
  nlohmann::json json;      ///< {"cells":[{key, metrics:{name:{baseline, current, change:{point,lo,hi}, regression}}}], ...}
  int regressions = 0;
  int matched = 0;
};

inline constexpr int compare_exit_regression = 10;

CompareResult compare_runs(const LoadedRun& baseline, const LoadedRun& current, const CompareOptions& options);

std::string format_compare(const CompareResult& result, double threshold);

}  // namespace refenc::profile
