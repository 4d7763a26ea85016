// The gate's result as a run record holds it: per model a verdict with its reason and evidence grade,
// and per profiled concurrency level the figures the verdict rests on.
//
//   const GateReport& g = *run.gate;
//   bool no_go = g.models[0].verdict == Verdict::no_go;
//   double lo = g.models[0].levels[0].p95_e2e_reduction.lo;   // levels: one per profiled concurrency
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "profile/record/capacity_record.hpp"
#include "profile/record/labels.hpp"
#include "profile/record/workload_specs.hpp"
#include "profile/stats/bootstrap.hpp"

namespace refenc::profile {

/// Shares of mean cold M4a E2E per stage (queueing reported apart).
struct StageShares {
  double preprocessing = 0, encode = 0, synthesis = 0, queue = 0;
};

/// One arm's pooled cold figures at one concurrency.
struct ArmFigures {
  std::size_t requests = 0;
  double p95_e2e_s = 0;
  double throughput_rps = 0;
};

/// The gate at one concurrency level.
struct LevelResult {
  int concurrency = 0;
  StageShares shares_m4a;
  Stage top_stage = Stage::encode;  ///< preprocessing, encode or synthesis_end.
  Interval p95_e2e_reduction;       ///< 1 - p95(m4b) / p95(m4a).
  Interval throughput_gain;         ///< tput(m4b) / tput(m4a) - 1.
  ArmFigures m4a, m4b;
  Verdict outcome = Verdict::no_go;
  std::string reason;
  /// Share of the gate's bootstrap replicates in which a statistic clears its threshold (-1: not
  /// computed, e.g. in older reports). Replicate i resamples both arms as interval replicate i does.
  double bootstrap_go_share = -1;
};

/// How stable a model's verdict is: the share of bootstrap replicates that give each level's verdict
/// (the smallest over levels with a decisive outcome), and the verdicts the gate gives each repeat alone.
struct VerdictStability {
  double bootstrap_agreement = -1;       ///< -1 when no level has a decisive (GO / NO-GO) outcome.
  int repeats = 0;                       ///< Repeats judged one at a time.
  int repeats_agreeing = 0;              ///< Of them, those whose verdict equals the model's.
  std::vector<Verdict> repeat_verdicts;  ///< Per repeat, in repeat order.
};

/// The gate for one model.
struct ModelVerdict {
  std::string model;
  std::string evidence_grade;
  Verdict verdict = Verdict::no_go;
  std::string reason;
  std::string parity;               ///< The parity condition as judged (empty when not evaluated).
  std::vector<LevelResult> levels;  ///< Empty for NOT_APPLICABLE and MISSING_ARM.

  std::optional<CapacityResult> capacity;     ///< The capacity criterion, when the run swept rates.
  std::vector<std::string> contaminated;      ///< Cold cells that stayed contaminated (the verdict is INCONCLUSIVE).
  std::optional<VerdictStability> stability;  ///< Absent for NOT_APPLICABLE, MISSING_ARM and older reports.
};

/// The gate for a run.
struct GateReport {
  GateOptions options;
  std::vector<ModelVerdict> models;
  int exit_code = 0;
};

}  // namespace refenc::profile
