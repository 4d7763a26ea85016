// CellMetrics: the numbers of one cell (model x arm x phase x concurrency x repeat), as report JSON.
//
// Latency stages are summarised over the successful requests (nearest-rank percentiles, seconds);
// failures are counted in `errors`. Throughput is successful requests (and modelled audio seconds)
// per second of wall time from the first scheduled send to the last completion.
//
//   nlohmann::json cell = cell_json(id, key, run, stats_after.minus(stats_before), telemetry);
//   cell["stages"]["e2e"]["p95"];
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/service_stats.hpp"
#include "profile/runner.hpp"
#include "profile/telemetry.hpp"

namespace refenc::profile {

/// Identity of a cell.
struct CellKey {
  std::string model, arm, phase;
  int concurrency = 0;
  int repeat = 0;
  std::string id() const;  ///< "model/arm/phase/c8/r0"
};

/// Report JSON for a finished cell (schema: reports/report.schema.json, "cells" items).
nlohmann::json cell_json(const CellKey& key, const RunResult& run, const ServiceStats& delta,
                         const TelemetrySummary& telemetry, bool open_loop, bool batching_active);

/// The stage names reported per cell, and whether each is measured, modelled or both.
const std::vector<std::pair<std::string, std::string>>& stage_kinds();

/// Samples of one stage ("preprocessing", "encode", "synthesis_first_audio", "synthesis_end", "ttfa",
/// "e2e") over successful records.
std::vector<double> stage_samples(const std::vector<RequestRecord>& records, const std::string& stage);

}  // namespace refenc::profile
