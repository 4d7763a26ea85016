// The noise floor of a compared metric: how far the runs move on their own. The floor is the largest
// of three figures:
//  - the group's own A/A twins (aa_spread.hpp) in every run of both sides: the largest |twin / cell - 1|
//    (a group without twins borrows those of the same model, phase and concurrency in another arm);
//  - the pooled A/A bound: every A/A pair of the group's phase and metric in every run of both sides
//    (all models, arms and concurrency levels) gives sigma, the RMS of ln(twin / cell). Under no change,
//    ln(current / baseline) of one run a side is distributed as one more such pair, and with nb and nc
//    runs a side its spread shrinks by sqrt((1/nb + 1/nc) / 2); the bound is the two-sided `confidence`
//    prediction bound exp(t * sigma * that factor) - 1, t Student's with one degree of freedom per pair.
//    A single pair is one draw of the noise, not its tail; this is what makes one run a side usable;
//  - with two runs or more on a side, the between-run spread of the metric (largest |run / median - 1|).
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

/// The A/A spread of every run on both sides (aa_spread.hpp), computed once per comparison.
struct AaEvidence {
  std::vector<std::vector<AaSpread>> runs;  ///< Baseline runs first, then current runs.
  int baseline_runs = 0, current_runs = 0;
};
AaEvidence aa_evidence(const std::vector<const RunRecord*>& baseline, const std::vector<const RunRecord*>& current);

/// The floor of `metric` in `group`, given both sides' A/A evidence and the metric per run;
/// `confidence` is the pooled A/A bound's two-sided level.
NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const AaEvidence& aa,
                       const std::vector<double>& baseline_values, const std::vector<double>& current_values,
                       double confidence = 0.99);
/// The same from the runs themselves (computes their A/A evidence).
NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const std::vector<const RunRecord*>& baseline,
                       const std::vector<const RunRecord*>& current, const std::vector<double>& baseline_values,
                       const std::vector<double>& current_values, double confidence = 0.99);

/// Largest |v / median(values) - 1| over `values` (0 for fewer than two).
double between_run_spread(const std::vector<double>& values);

/// The pooled A/A bound from signed log ratios ln(twin / cell): exp(t * rms * sqrt((1/nb + 1/nc) / 2)) - 1,
/// t the two-sided `confidence` quantile of Student's t with log_ratios.size() degrees of freedom
/// (0 for no pairs).
double pooled_aa_bound(const std::vector<double>& log_ratios, int baseline_runs, int current_runs, double confidence);

}  // namespace refenc::profile
