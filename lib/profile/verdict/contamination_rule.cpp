#include "profile/verdict/contamination_rule.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace refenc::profile {

std::vector<std::string> contamination_reasons(const HostLoad& load, const ContaminationSpec& spec) {
  std::vector<std::string> out;
  if (!spec.enabled || !load.available) return out;
  if (load.other_cores() > spec.max_other_cores)
    out.push_back(fmt::format("other processes used {:.2f} cores ({:.0f}% of {} cores; limit {:.2f})",
                              load.other_cores(), 100 * load.other_cpu_share, load.cores, spec.max_other_cores));
  if (load.steal_share > spec.max_steal_share)
    out.push_back(fmt::format("CPU steal {:.1f}% (limit {:.1f}%)", 100 * load.steal_share, 100 * spec.max_steal_share));
  if (spec.max_load_per_core > 0 && load.cores > 0 &&
      load.load1_start / static_cast<double>(load.cores) > spec.max_load_per_core)
    out.push_back(fmt::format("load average {:.2f} at the start over {} cores (limit {:.2f} per core)",
                              load.load1_start, load.cores, spec.max_load_per_core));
  return out;
}

bool rerun_contaminated(const std::vector<std::string>& reasons, int attempt, const ContaminationSpec& spec) {
  return !reasons.empty() && attempt < spec.max_reruns;
}

bool contaminated(const Cell& cell) { return cell.contaminated; }

bool any_contaminated(std::span<const Cell* const> cells) {
  return std::any_of(cells.begin(), cells.end(), [](const Cell* c) { return contaminated(*c); });
}

std::vector<std::string> contaminated_cold_cells(const RunRecord& run, const std::string& model) {
  std::vector<std::string> out;
  for (const Cell& c : run.cells)
    if (c.key.model == model && c.key.phase == Phase::cold && contaminated(c))
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
