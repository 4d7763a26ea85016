// ModelledDevice: the device a calibration describes, on which a modelled encoder call spends its
// time. With a measured capacity curve or slowdown table (a CPU) it is a SharedDevice, whose calls in
// flight share it as measured, each drawing its own share of the measured spread from its content;
// otherwise (a GPU preset) a DeviceQueue over the calibration's streams, first come first served.
// Either way the call sleeps (no host CPU) for what the calibration's cost surface says for its batch
// size and longest reference. Knows no encoder: apps/refenc's modelled network runs its calls here.
//
//   CostSurface surface(resolve_calibration("fish-s2-pro-cpu", ""));
//   ModelledDevice device = make_modelled_device(surface.calibration());
//   device.run(surface, /*batch=*/4, /*length_s=*/7.5, /*content=*/0x5eed);  // sleeps its modelled time
//   int workers = device.parallel;   // calls it runs at once: M4b's matched batch workers
#pragma once

#include <cstdint>
#include <memory>

#include "profile/device/cost_surface.hpp"
#include "profile/device/device_queue.hpp"
#include "profile/device/shared_device.hpp"

namespace refenc::profile {

/// Where a modelled call's time is spent: exactly one of the two is set.
struct ModelledDevice {
  std::shared_ptr<DeviceQueue> queue;    ///< FCFS over streams; a call lasts device_seconds.
  std::shared_ptr<SharedDevice> shared;  ///< Shared; a call is call_seconds of work at its longest length.
  /// Calls the device runs at once for M4b's matched batch workers: the streams, or the calibrating
  /// host's cores for a shared device (at least 1).
  int parallel = 1;

  /// Runs one call of `batch` references, the longest `length_s` seconds, costed by `surface`; on a
  /// shared device `content` (the same clips, the same value, whatever their order) seeds the call's
  /// standard normal for the measured spread. Blocks until the call's modelled end.
  void run(const CostSurface& surface, int batch, double length_s, std::uint64_t content) const;
};

/// The device a calibration describes: shared when it has a capacity curve or a slowdown table, else
/// its streams.
ModelledDevice make_modelled_device(const Calibration& calibration);

}  // namespace refenc::profile
