// The noise floor of a compared metric: how far the runs move on their own. From the A/A twins of
// every run on both sides (aa_spread.hpp; a group without twins borrows those of the same model,
// phase and concurrency in another arm) and, when a side has two runs or more, the between-run spread
// of the metric (largest |run / median - 1|). The floor is the largest of these.
//
//   NoiseFloor f = noise_floor(group, CompareMetric::p95_e2e, {&base}, {&cur}, {1.20}, {1.25});
//   bool beyond = change.point > f.value;   // f.source says where the figure came from
#pragma once

#include <string>
#include <vector>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// A noise floor and where it came from.
struct NoiseFloor {
  double value = 0;
  std::string source;  ///< "none (...)" when no run has A/A twins and each side has one run.
};

/// The floor of `metric` in `group`, given both sides' runs and the metric per run.
NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const std::vector<const RunRecord*>& baseline,
                       const std::vector<const RunRecord*>& current, const std::vector<double>& baseline_values,
                       const std::vector<double>& current_values);

/// Largest |v / median(values) - 1| over `values` (0 for fewer than two).
double between_run_spread(const std::vector<double>& values);

}  // namespace refenc::profile
