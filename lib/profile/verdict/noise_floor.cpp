#include "profile/verdict/noise_floor.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "profile/verdict/aa_spread.hpp"

namespace refenc::profile {

double between_run_spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  std::vector<double> v = values;
  std::sort(v.begin(), v.end());
  double med = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  if (!(med > 0)) return 0;
  double out = 0;
  for (double x : v) out = std::max(out, std::abs(x / med - 1));
  return out;
}

NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const std::vector<const RunRecord*>& baseline,
                       const std::vector<const RunRecord*>& current, const std::vector<double>& baseline_values,
                       const std::vector<double>& current_values) {
  const std::string name(to_string(metric));
  double aa = 0;
  std::size_t pairs = 0;
  bool borrowed = false;
  auto scan = [&](bool same_arm) {
    for (const auto* side : {&baseline, &current})
      for (const RunRecord* run : *side)
        for (const AaSpread& s : aa_spread(*run)) {
          const GroupKey& g = s.group;
          if (s.metric != name || g.model != group.model || g.phase != group.phase ||
              g.concurrency != group.concurrency || (g.arm == group.arm) != same_arm)
            continue;
          aa = std::max(aa, s.spread);
          pairs += s.differences.size();
        }
  };
  scan(true);
  if (pairs == 0) {
    scan(false);
    borrowed = pairs > 0;
  }
  const double between = std::max(between_run_spread(baseline_values), between_run_spread(current_values));
  NoiseFloor f;
  f.value = std::max(aa, between);
  std::vector<std::string> parts;
  if (pairs > 0)
    parts.push_back(fmt::format("A/A {:.1f}% ({} pair{}{})", 100 * aa, pairs, pairs == 1 ? "" : "s",
                                borrowed ? ", other arm" : ""));
  if (baseline_values.size() > 1 || current_values.size() > 1)
    parts.push_back(fmt::format("between runs {:.1f}%", 100 * between));
  if (parts.empty()) {
    f.source = "none (one run each side, no A/A cells)";
  } else {
    for (std::size_t i = 0; i < parts.size(); ++i) f.source += (i ? "; " : "") + parts[i];
  }
  return f;
}

}  // namespace refenc::profile
