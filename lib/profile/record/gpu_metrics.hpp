// The status of each GPU metric over a cell (utilisation, memory, power, energy) and the names of the
// two ways a cell's GPU energy is had; part of a cell's telemetry (telemetry_summary.hpp).
//
//   GpuMetrics m;
//   m.power.unavailable = "unavailable: nvmlDeviceGetPowerUsage: Not Supported (NVML code 3)";
//   bool measured = m.energy.samples >= 2;   // the counter can be differenced
#pragma once

#include <string>

namespace refenc::profile {

/// How one GPU metric fared over a cell: a metric can be missing or fail while the others are read.
struct GpuMetricStatus {
  int samples = 0;   ///< Readings that returned a value.
  int failures = 0;  ///< Readings whose NVML call returned an error (counted; sampling went on).
  /// "unavailable: <reason>" when the metric gave no figure for the cell (no reading returned a value,
  /// or the energy counter could not be differenced); empty otherwise.
  std::string unavailable;
};

/// The four metrics read from NVML, each with its own status.
struct GpuMetrics {
  GpuMetricStatus utilization;  ///< nvmlDeviceGetUtilizationRates
  GpuMetricStatus memory;       ///< nvmlDeviceGetMemoryInfo
  GpuMetricStatus power;        ///< nvmlDeviceGetPowerUsage
  GpuMetricStatus energy;       ///< nvmlDeviceGetTotalEnergyConsumption (the counter)
};

/// `GpuSummary::energy_method` when the energy is the difference of the driver's energy counter.
inline constexpr const char* energy_method_counter = "counter";
/// `GpuSummary::energy_method` when the counter was unavailable and power was integrated over the
/// sampling intervals (trapezoids between successive power readings).
inline constexpr const char* energy_method_power_integrated = "power_integrated";

}  // namespace refenc::profile
