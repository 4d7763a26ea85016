// The order of one repeat's cells and what becomes of each: the arms interleaved, then each A/A twin
// (the same arm again, so that its difference from the first run of the arm shows the noise), and a
// contaminated cell's re-run inserted right after it (verdict/contamination_rule.hpp decides which).
// finish_cell files a measured cell as a cell or an A/A twin, with its host load, contamination and
// attempt.
//
//   std::vector<CellPlan> plan = cell_plan(arms, manifest.noise);  // m4a, m4b, m4a (A/A)
//   bool twin = plan.back().aa;                                    // true; the plan may grow with re-runs
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"

namespace refenc::profile {

/// One cell to run.
struct CellPlan {
  ArmSpec arm;
  bool aa = false;                  ///< The A/A twin of the arm's cell.
  int attempt = 0;                  ///< 0, then 1, 2 ... for re-runs of a contaminated attempt.
  std::vector<HostLoad> discarded;  ///< The contaminated attempts before this one.

  /// The plan of the next attempt after this one measured `load`.
  CellPlan retry(const HostLoad& load) const;
};

/// The arms in order, then the A/A twins of the arms `noise` names.
std::vector<CellPlan> cell_plan(const std::vector<ArmSpec>& arms, const NoiseSettings& noise);

/// Files the cell just pushed to run.cells (its requests under its id, an A/A twin's under
/// aa_cell_id): records the host load and contamination on it and its requests, and moves an A/A twin
/// to run.aa_cells.
void finish_cell(RunRecord& run, const CellPlan& plan, const std::optional<HostLoad>& load,
                 const std::vector<std::string>& reasons);

}  // namespace refenc::profile
