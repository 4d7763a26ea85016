#include "profile/verdict/noise_floor.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "profile/stats/student_t.hpp"
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

double pooled_aa_bound(const std::vector<double>& log_ratios, int baseline_runs, int current_runs, double confidence) {
  if (log_ratios.empty() || baseline_runs < 1 || current_runs < 1) return 0;
  double ss = 0;
  for (double d : log_ratios) ss += d * d;
  const double sigma = std::sqrt(ss / static_cast<double>(log_ratios.size()));
  const double runs = std::sqrt((1.0 / baseline_runs + 1.0 / current_runs) / 2);
  const double t = student_t_quantile(0.5 + confidence / 2, static_cast<int>(log_ratios.size()));
  return std::expm1(t * sigma * runs);
}

AaEvidence aa_evidence(const std::vector<const RunRecord*>& baseline, const std::vector<const RunRecord*>& current) {
  AaEvidence out;
  out.baseline_runs = static_cast<int>(baseline.size());
  out.current_runs = static_cast<int>(current.size());
  for (const auto* side : {&baseline, &current})
    for (const RunRecord* run : *side) out.runs.push_back(aa_spread(*run));
  return out;
}

NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const std::vector<const RunRecord*>& baseline,
                       const std::vector<const RunRecord*>& current, const std::vector<double>& baseline_values,
                       const std::vector<double>& current_values, double confidence) {
  return noise_floor(group, metric, aa_evidence(baseline, current), baseline_values, current_values, confidence);
}

NoiseFloor noise_floor(const GroupKey& group, CompareMetric metric, const AaEvidence& evidence,
                       const std::vector<double>& baseline_values, const std::vector<double>& current_values,
                       double confidence) {
  const std::string name(to_string(metric));
  double aa = 0;
  std::size_t pairs = 0;
  bool borrowed = false;
  std::vector<double> pooled;  // every pair of this phase and metric
  const auto& spreads = evidence.runs;
  for (const auto& run : spreads)
    for (const AaSpread& s : run)
      if (s.metric == name && s.group.phase == group.phase)
        pooled.insert(pooled.end(), s.log_ratios.begin(), s.log_ratios.end());
  auto scan = [&](bool same_arm) {
    for (const auto& run : spreads)
      for (const AaSpread& s : run) {
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
  const double bound = pooled_aa_bound(pooled, evidence.baseline_runs, evidence.current_runs, confidence);
  const double between = std::max(between_run_spread(baseline_values), between_run_spread(current_values));
  NoiseFloor f;
  f.value = std::max({aa, bound, between});
  std::vector<std::string> parts;
  if (pairs > 0)
    parts.push_back(fmt::format("A/A {:.1f}% ({} pair{}{})", 100 * aa, pairs, pairs == 1 ? "" : "s",
                                borrowed ? ", other arm" : ""));
  if (!pooled.empty())
    parts.push_back(fmt::format("pooled A/A {:.1f}% ({} pairs of {} {}, {:g}%)", 100 * bound, pooled.size(),
                                to_string(group.phase), name, 100 * confidence));
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
