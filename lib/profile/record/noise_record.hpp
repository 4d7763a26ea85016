// The noise side of a run: which arms ran A/A cells, the contamination thresholds, the stopping rule
// and where each cell group stopped, and the A/A spread per metric (the run's noise floor).
//
//   NoiseSettings n;                        // defaults: A/A cells for m4a, contamination judged, no extra repeats
//   bool aa = n.runs_aa(Arm::m4a);          // true
//   std::string id = aa_cell_id(CellKey{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0});  // ".../c8/r0/aa"
#pragma once

#include <string>
#include <vector>

#include "profile/record/cell_key.hpp"
#include "profile/record/host_load.hpp"
#include "profile/record/labels.hpp"

namespace refenc::profile {

/// The stopping rule (the manifest's "stopping" block): after the manifest's `repeats`, a cold cell
/// group repeats (arms interleaved) until both gate intervals at its concurrency are at most
/// `target_width` wide (hi - lo), or `max_repeats` repeats have run.
struct StoppingSpec {
  int max_repeats = 0;      ///< 0: the manifest's repeats (no rule).
  double target_width = 0;  ///< Width of the p95 reduction and throughput gain intervals to stop at.
};

/// Where one model/phase/concurrency stopped repeating, and why.
struct StopRecord {
  std::string model;
  Phase phase = Phase::cold;
  int concurrency = 0;
  int repeats = 0;
  std::string reason;  ///< "repeats", "intervals within target", "max_repeats", "no gate level".
  double p95_width = 0, throughput_width = 0;  ///< The gate intervals' widths when it stopped (cold, eligible).
};

/// The spread between a cell and its A/A twin for one metric, over every pair of a group.
struct AaSpread {
  GroupKey group;
  std::string metric;               ///< "p50_preprocessing", "p95_e2e", "p95_encode", "throughput".
  std::vector<double> differences;  ///< Per pair (repeat order): |aa / cell - 1|.
  double spread = 0;                ///< The largest of them.
  /// Per pair: ln(aa / cell), signed (compare's pooled floor; recomputed from requests, not stored).
  std::vector<double> log_ratios;
};

/// How a run treated noise (report.json "noise").
struct NoiseSettings {
  std::vector<Arm> aa_arms{Arm::m4a};  ///< Arms run a second time per cell (A/A); empty: none.
  ContaminationSpec contamination;
  StoppingSpec stopping;
  std::vector<StopRecord> stops;    ///< Per model, phase and concurrency, in run order.
  std::vector<AaSpread> aa_spread;  ///< Per group with A/A cells and metric.

  bool runs_aa(Arm arm) const;
};

/// The cell id of `key`'s A/A twin: key.id() + "/aa" (requests.jsonl's "cell" for its requests).
std::string aa_cell_id(const CellKey& key);

}  // namespace refenc::profile
