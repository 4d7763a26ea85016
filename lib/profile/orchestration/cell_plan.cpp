#include "profile/orchestration/cell_plan.hpp"

namespace refenc::profile {

CellPlan CellPlan::retry(const HostLoad& load) const {
  CellPlan next = *this;
  next.attempt = attempt + 1;
  next.discarded.push_back(load);
  return next;
}

std::vector<CellPlan> cell_plan(const std::vector<ArmSpec>& arms, const NoiseSettings& noise) {
  std::vector<CellPlan> plan;
  for (const ArmSpec& a : arms) plan.push_back({a});
  for (const ArmSpec& a : arms)
    if (noise.runs_aa(a.arm)) plan.push_back({a, true});
  return plan;
}

void finish_cell(RunRecord& run, const CellPlan& plan, const std::optional<HostLoad>& load,
                 const std::vector<std::string>& reasons) {
  if (run.cells.empty()) return;
  Cell& cell = run.cells.back();
  cell.host_load = load;
  cell.contaminated = !reasons.empty();
  cell.contamination = reasons;
  cell.discarded = plan.discarded;
  cell.aa = plan.aa;
  if (!reasons.empty())
    cell.warnings.push_back("contaminated after " + std::to_string(plan.attempt + 1) + " attempt(s): " + reasons[0]);
  auto it = run.requests.find(plan.aa ? aa_cell_id(cell.key) : cell.key.id());
  if (it != run.requests.end())
    for (RequestRecord& r : it->second) {
      r.aa = plan.aa;
      r.contaminated = cell.contaminated;
      r.attempt = plan.attempt;
    }
  if (!plan.aa) return;
  run.aa_cells.push_back(std::move(cell));
  run.cells.pop_back();
}

}  // namespace refenc::profile
