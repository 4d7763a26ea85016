// The gate's contamination rule: a cell run on a busy machine decides nothing. When any cold cell of a
// model stayed contaminated after its re-runs, the model's verdict becomes INCONCLUSIVE and its reason
// names the cells and what crossed which threshold (parity, judged after, can still make it NO-GO).
//
//   std::vector<std::string> reasons;
//   apply_contamination(run, verdict, reasons);  // verdict.verdict == Verdict::inconclusive if contaminated
#pragma once

#include <string>
#include <vector>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// The ids of `model`'s cold cells that stayed contaminated, each with its first reason.
std::vector<std::string> contaminated_cold_cells(const RunRecord& run, const std::string& model);

/// Makes `verdict` INCONCLUSIVE, fills verdict.contaminated and puts the reason first in `reasons` when
/// the model has contaminated cold cells; does nothing otherwise.
void apply_contamination(const RunRecord& run, ModelVerdict& verdict, std::vector<std::string>& reasons);

}  // namespace refenc::profile
