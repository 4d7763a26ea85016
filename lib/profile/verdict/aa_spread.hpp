// The noise floor a run measures itself: each A/A twin against its cell (same model, arm, phase,
// concurrency and repeat, run one after the other), per compared metric, |twin / cell - 1|, and per
// group the largest of these. metric_value is the one definition of a compared metric over requests.
//
//   std::vector<AaSpread> s = aa_spread(run);   // one row per group with A/A cells and metric
//   double floor = s.empty() ? 0 : s[0].spread;  // e.g. 0.04: twins differ by up to 4%
//   double p95 = metric_value(run.requests_of(run.cells[0].key), run.cells[0].wall_s, CompareMetric::p95_e2e);
#pragma once

#include <vector>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// A compared metric over the successful `requests` of cells that ran `wall_s` seconds in all:
/// p50 preprocessing, p95 E2E, p95 encode (seconds, nearest rank) or throughput (successful / wall_s).
/// 0 when there is no successful request.
double metric_value(const std::vector<RequestRecord>& requests, double wall_s, CompareMetric metric);

/// Every compared metric, in compare's order.
const std::vector<CompareMetric>& compared_metrics();

/// The A/A spread of every group with A/A twins, metric by metric (needs the run's requests).
std::vector<AaSpread> aa_spread(const RunRecord& run);

}  // namespace refenc::profile
