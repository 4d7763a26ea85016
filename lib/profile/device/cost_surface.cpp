#include "profile/device/cost_surface.hpp"

#include <algorithm>

#include "profile/device/linear.hpp"

namespace refenc::profile {
namespace {

constexpr double kMinMs = 1e-3;

}  // namespace

CostSurface::CostSurface(Calibration calibration) : cal_(std::move(calibration)) {}

double CostSurface::row_ms(std::size_t row, double length_s) const {
  const std::vector<double>& xs = cal_.lengths_s;
  const std::vector<double>& ys = cal_.time_ms[row];
  if (xs.size() == 1) {
    // One length: shift along the fitted per-second slope, scaled to this row.
    double base = cal_.time_ms[0][0];
    double scale = base > 0 ? ys[0] / base : 1;
    return ys[0] + scale * cal_.per_audio_second_ms * (length_s - xs[0]);
  }
  std::size_t hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), length_s) - xs.begin());
  hi = std::clamp<std::size_t>(hi, 1, xs.size() - 1);
  return linear(xs[hi - 1], ys[hi - 1], xs[hi], ys[hi], length_s);
}

double CostSurface::call_seconds(int batch, double length_s) const {
  batch = std::max(1, batch);
  const std::vector<int>& bs = cal_.batch_sizes;
  double ms = 0;
  if (bs.size() == 1) {
    ms = batch * row_ms(0, length_s);
  } else {
    std::size_t hi = static_cast<std::size_t>(std::upper_bound(bs.begin(), bs.end(), batch) - bs.begin());
    hi = std::clamp<std::size_t>(hi, 1, bs.size() - 1);
    ms = linear(bs[hi - 1], row_ms(hi - 1, length_s), bs[hi], row_ms(hi, length_s), batch);
  }
  return std::max(kMinMs, ms) / 1000.0;
}

double CostSurface::device_seconds(int batch, double length_s) const {
  return call_seconds(batch, length_s) * cal_.sharing.stream_slowdown;
}

}  // namespace refenc::profile
