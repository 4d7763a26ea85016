// CostSurface: a calibration's device time of one encoder call as a function of batch size and the
// batch's longest reference, interpolated between the measured grid points (piecewise linear in both)
// and extrapolated linearly from the nearest segment outside it.
//
// Beyond the largest measured batch, each extra item costs what the last measured step added per item;
// with only batch 1 measured, a batch of B costs B single calls (no batching gain assumed). Beyond the
// measured lengths, the nearest segment's slope continues; with one length measured, the time scales
// with the length through the calibration's fitted per-second slope. Times never fall below 1 us.
//
//   refenc::profile::CostSurface surface(refenc::profile::load_calibration("cal.json"));
//   double alone = surface.call_seconds(4, 7.5);     // a batch of 4, longest 7.5 s, device to itself
//   double shared = surface.device_seconds(4, 7.5);  // with the calibration's stream slowdown
#pragma once

#include "profile/record/calibration.hpp"

namespace refenc::profile {

class CostSurface {
 public:
  /// Takes a validated calibration (parse_calibration's checks hold).
  explicit CostSurface(Calibration calibration);

  /// Seconds one call of `batch` references (longest `length_s` seconds) takes with the device to itself.
  double call_seconds(int batch, double length_s) const;
  /// call_seconds times the calibration's stream_slowdown: what one call occupies a stream of a
  /// DeviceQueue with calibration().sharing.streams streams.
  double device_seconds(int batch, double length_s) const;

  const Calibration& calibration() const noexcept { return cal_; }

 private:
  /// Time (ms) of grid row `row` at `length_s`.
  double row_ms(std::size_t row, double length_s) const;
  Calibration cal_;
};

}  // namespace refenc::profile
