#include "profile/verdict/contamination_rule.hpp"

namespace refenc::profile {

std::vector<std::string> contaminated_cold_cells(const RunRecord& run, const std::string& model) {
  std::vector<std::string> out;
  for (const Cell& c : run.cells)
    if (c.key.model == model && c.key.phase == Phase::cold && c.contaminated)
      out.push_back(c.key.id() + (c.contamination.empty() ? "" : " (" + c.contamination[0] + ")"));
  return out;
}

void apply_contamination(const RunRecord& run, ModelVerdict& verdict, std::vector<std::string>& reasons) {
  verdict.contaminated = contaminated_cold_cells(run, verdict.model);
  if (verdict.contaminated.empty()) return;
  verdict.verdict = Verdict::inconclusive;
  std::string line = "contaminated: the machine was busy during ";
  for (std::size_t i = 0; i < verdict.contaminated.size(); ++i) line += (i ? ", " : "") + verdict.contaminated[i];
  reasons.insert(reasons.begin(), line + ", even after the re-runs: these cells decide nothing");
}

}  // namespace refenc::profile
