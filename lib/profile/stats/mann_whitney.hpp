// One-sided Mann-Whitney U test between two small samples (per-run figures of a baseline and a current
// set of runs), as benchstat uses to tell a change from run-to-run noise. U counts the pairs
// (x_i, y_j) with y_j > x_i, ties counting one half; the p-value is the share of all splits of the
// pooled values into groups of the same sizes whose U is at least the observed one (exact
// enumeration up to 20 values in all; a normal approximation with continuity correction beyond).
//
//   std::vector<double> base{1.00, 1.02, 0.99}, cur{1.31, 1.29, 1.35};
//   double p = refenc::profile::mann_whitney_greater(base, cur);  // 0.05: every current value is larger
//   bool same = refenc::profile::mann_whitney_greater(base, base) > 0.05;
#pragma once

#include <span>

namespace refenc::profile {

/// P(U >= observed U) under the hypothesis that `y` and `x` come from one distribution (H1: `y` is
/// larger). 1 when either sample is empty.
double mann_whitney_greater(std::span<const double> x, std::span<const double> y);

}  // namespace refenc::profile
