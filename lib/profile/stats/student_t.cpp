#include "profile/stats/student_t.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace refenc::profile {

double student_t_two_sided(double t, int dof) {
  t = std::abs(t);
  if (dof <= 0) return std::erfc(t / std::numbers::sqrt2);
  // P(|T| < t) by the closed forms for integer dof (Abramowitz and Stegun 26.7.3-4), theta = atan(t / sqrt(dof)).
  const double theta = std::atan(t / std::sqrt(static_cast<double>(dof)));
  const double c2 = std::cos(theta) * std::cos(theta), s = std::sin(theta);
  double inside;
  if (dof % 2 == 0) {
    double term = 1, sum = 1;
    for (int k = 2; k <= dof - 2; k += 2) sum += (term *= c2 * (k - 1) / k);
    inside = s * sum;
  } else if (dof == 1) {
    inside = 2 * theta / std::numbers::pi;
  } else {
    double term = 1, sum = 1;
    for (int k = 3; k <= dof - 2; k += 2) sum += (term *= c2 * (k - 1) / k);
    inside = 2 / std::numbers::pi * (theta + s * std::cos(theta) * sum);
  }
  return std::max(0.0, 1 - inside);
}

double student_t_quantile(double p, int dof) {
  if (!(p > 0.5)) return 0;
  if (!(p < 1)) return INFINITY;
  const double tail = 2 * (1 - p);
  double lo = 0, hi = 1;
  while (student_t_two_sided(hi, dof) > tail && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_two_sided(mid, dof) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace refenc::profile
