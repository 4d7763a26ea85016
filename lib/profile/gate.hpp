// Gate: the M4b go/no-go decision per model, from a report's cold-cache cells and their raw requests.
//
// Per model, in order:
//   1. eligibility: a model whose encoder batches internally (not migrated) or has no safe batch
//      primitive is NOT_APPLICABLE, with that reason;
//   2. arms: the cold phase needs both m4a and m4b at every profiled concurrency, else MISSING_ARM;
//   3. at each concurrency (requests pooled over repeats):
//      (a) reference encode must be the largest stage of cold M4a E2E (shares of mean E2E:
//          preprocessing, encode, synthesis; queueing is reported apart) -- else NO-GO;
//      (b) M4b vs M4a: p95 E2E reduction r = 1 - p95(m4b) / p95(m4a), throughput gain
//          g = tput(m4b) / tput(m4a) - 1, each with a seeded percentile-bootstrap interval (requests
//          resampled within each arm's cold cells; a throughput replicate is the observed throughput
//          scaled by mean E2E / resampled mean E2E, Little's law at fixed concurrency).
//          GO when lo(r) >= latency threshold or lo(g) >= throughput threshold; INCONCLUSIVE when only
//          a point estimate clears its threshold; NO-GO otherwise.
//   The model's verdict is the worst over concurrencies (NO-GO < INCONCLUSIVE < GO).
// Every verdict carries the evidence grade ("proxy scale tiny" or "real module ...").
//
// Exit codes (refenc gate, and refenc profile after the run): 0 every model GO or NOT_APPLICABLE;
// 10 some NO-GO; 11 some INCONCLUSIVE; 12 some MISSING_ARM (the highest applies); harness errors use
// the error codes 1-7.
//
//   GateResult g = evaluate_gate(report, requests_by_cell, {});
//   g.exit_code; g.json["models"][0]["verdict"];
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/runner.hpp"

namespace refenc::profile {

struct GateOptions {
  double latency_reduction = 0.15;
  double throughput_gain = 0.20;
  int resamples = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 1;
};

struct GateResult {
  nlohmann::json json;   ///< {"options":..., "models":[{model, verdict, reason, evidence_grade, ...}]}
  int exit_code = 0;
};

inline constexpr int gate_exit_no_go = 10;
inline constexpr int gate_exit_inconclusive = 11;
inline constexpr int gate_exit_missing_arm = 12;

/// Gate options from a report's "manifest.gate" block and seed (defaults where absent).
GateOptions gate_options_from_report(const nlohmann::json& report);

/// Evaluates the gate. `report` needs "models" (name, eligibility, evidence_grade) and "cells";
/// `requests` maps a cell id to its raw records.
GateResult evaluate_gate(const nlohmann::json& report,
                         const std::map<std::string, std::vector<RequestRecord>>& requests,
                         const GateOptions& options);

/// Plain-text table of a gate result, for the terminal and summary.md.
std::string format_gate(const nlohmann::json& gate);

}  // namespace refenc::profile
