// Student's t distribution for integer degrees of freedom: the two-sided tail and its quantile, as a
// prediction bound needs when a spread is estimated from a few pairs (compare's pooled A/A floor).
// Exact closed forms (no series cut off), so small samples get their full width.
//
//   double t = refenc::profile::student_t_quantile(0.995, 6);   // 3.7074: 99% two-sided, 6 dof
//   double z = refenc::profile::student_t_quantile(0.975, 0);   // 1.95996: dof 0 means the normal
//   double p = refenc::profile::student_t_two_sided(3.7074, 6);  // 0.01
#pragma once

namespace refenc::profile {

/// P(|T| > t) for T with `dof` degrees of freedom (dof >= 1; 0: the standard normal).
double student_t_two_sided(double t, int dof);

/// The `p` quantile (0.5 < p < 1) of T with `dof` degrees of freedom (0: the standard normal).
double student_t_quantile(double p, int dof);

}  // namespace refenc::profile
