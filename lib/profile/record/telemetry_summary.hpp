// What a cell records of the machine while it ran: CPU use of the process and the system, and GPU
// utilisation, memory, power and energy (with the energy per encode), or why any of them was not
// available.
//
//   TelemetrySummary t = sampler.stop();
//   if (!t.gpu.available) std::cout << t.gpu.reason;
//   else if (!t.gpu.energy_method.empty()) std::cout << t.gpu.energy_j << " J (" << t.gpu.energy_method << ")";
#pragma once

#include <cstdint>
#include <string>

#include "profile/record/gpu_metrics.hpp"

namespace refenc::profile {

/// CPU use while a cell ran, from /proc.
struct CpuSummary {
  bool available = false;
  std::string reason;       ///< Why not available.
  double process_mean = 0;  ///< Mean CPU use of this process, in cores (2.0 = two cores busy).
  double process_max = 0;   ///< Largest sampled interval, in cores.
  double system_mean = 0;   ///< Mean fraction of all cores busy (0..1).
  double system_max = 0;
  int cores = 0;
};

/// GPU 0 while a cell ran, from NVML.
struct GpuSummary {
  bool available = false;
  std::string reason;                  ///< Why not available (no library, no device, NVML error).
  std::string name;                    ///< Device 0's name.
  double util_mean = 0, util_max = 0;  ///< Percent.
  double memory_used_max_mib = 0, memory_total_mib = 0;
  int samples = 0;                           ///< Readings taken (each asks every available metric once).
  double power_mean_w = 0, power_max_w = 0;  ///< Watts; meaningful when metrics.power.samples > 0.
  /// Energy of device 0 over the cell in joules; meaningful when `energy_method` is not empty.
  double energy_j = 0;
  /// energy_method_counter, energy_method_power_integrated, or empty when no energy could be had.
  std::string energy_method;
  /// References the cell encoded (an M4b batch of four counts four): cache misses that ran the encoder
  /// (misses - disk_hits, failed ones included) plus uncacheable requests, from the cell's counter
  /// deltas (encodes_performed).
  std::uint64_t encodes = 0;
  /// energy_j / encodes; meaningful when `energy_method` is not empty and `encodes` > 0.
  double energy_per_encode_j = 0;
  GpuMetrics metrics;
};

/// Both, per cell.
struct TelemetrySummary {
  CpuSummary cpu;
  GpuSummary gpu;
};

}  // namespace refenc::profile
