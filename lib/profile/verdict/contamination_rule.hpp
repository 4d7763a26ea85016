// The contamination rule, the one definition of "a cell run on a busy machine decides nothing". A
// cell is contaminated when its host load (record/host_load.hpp) crossed a threshold of the manifest's
// "contamination" block: other processes' CPU, CPU steal by the hypervisor, the 1-minute load average.
// The runner re-runs such a cell while re-runs are left; the gate makes a model with a cold cell that
// stayed contaminated INCONCLUSIVE (naming the cells and what crossed which threshold; parity, judged
// after, can still make it NO-GO); compare flags a group with such a cell on either side and finds no
// regression in it unless told to judge contaminated cells.
//
//   HostLoad load{.available = true, .cores = 2, .other_cpu_share = 0.40};
//   ContaminationSpec spec;                                  // defaults: 0.5 core of other work, 10% steal
//   std::vector<std::string> why = contamination_reasons(load, spec);  // {"other processes used 0.80 ..."}
//   bool again = rerun_contaminated(why, /*attempt=*/0, spec);          // true: busy, and re-runs left
//   bool flagged = any_contaminated(group.cells);            // compare's flag for one side of a group
//   apply_contamination(run, verdict, reasons);  // verdict.verdict == Verdict::inconclusive if contaminated
#pragma once

#include <span>
#include <string>
#include <vector>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Why `load` is over `spec`'s thresholds, one line per threshold crossed; empty when it is not (or
/// when judging is off or the load unavailable). A cell is contaminated exactly when this is not empty.
std::vector<std::string> contamination_reasons(const HostLoad& load, const ContaminationSpec& spec);

/// Whether attempt `attempt` (0 for the first) of a cell, contaminated for `reasons`, is run again.
bool rerun_contaminated(const std::vector<std::string>& reasons, int attempt, const ContaminationSpec& spec);

/// Whether a recorded cell stayed contaminated (after its re-runs): it decides nothing.
bool contaminated(const Cell& cell);

/// Whether any of `cells` stayed contaminated.
bool any_contaminated(std::span<const Cell* const> cells);

/// The ids of `model`'s cold cells that stayed contaminated, each with its first reason.
std::vector<std::string> contaminated_cold_cells(const RunRecord& run, const std::string& model);

/// Makes `verdict` INCONCLUSIVE, fills verdict.contaminated and puts the reason first in `reasons` when
/// the model has contaminated cold cells; does nothing otherwise.
void apply_contamination(const RunRecord& run, ModelVerdict& verdict, std::vector<std::string>& reasons);

}  // namespace refenc::profile
