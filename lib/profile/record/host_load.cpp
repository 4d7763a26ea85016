#include "profile/record/host_load.hpp"

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

}  // namespace refenc::profile
