// Linear interpolation through two points, the one rule the modelled device interpolates by (a cost
// surface between grid points, a shared device's factors between levels, lengths and batch sizes).
//
//   double ms = refenc::profile::linear(2, 100, 4, 200, 3);   // 150: halfway between (2, 100) and (4, 200)
//   double far = refenc::profile::linear(2, 100, 4, 200, 6);  // 300: beyond the points, the same line
#pragma once

namespace refenc::profile {

/// The line through (x0, y0) and (x1, y1) evaluated at x (x0 != x1); extrapolates outside [x0, x1].
constexpr double linear(double x0, double y0, double x1, double y1, double x) {
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

}  // namespace refenc::profile
