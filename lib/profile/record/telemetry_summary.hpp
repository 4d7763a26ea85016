// What a cell records of the machine while it ran: CPU use of the process and the system, and GPU
// utilisation and memory, or why either was not available.
//
//   TelemetrySummary t = sampler.stop();
//   if (!t.gpu.available) std::cout << t.gpu.reason;
#pragma once

#include <string>

namespace refenc::profile {

/// CPU use while a cell ran, from /proc.
struct CpuSummary {
  bool available = false;
  std::string reason;            ///< Why not available.
  double process_mean = 0;       ///< Mean CPU use of this process, in cores (2.0 = two cores busy).
  double process_max = 0;        ///< Largest sampled interval, in cores.
  double system_mean = 0;        ///< Mean fraction of all cores busy (0..1).
  double system_max = 0;
  int cores = 0;
};

/// GPU 0 while a cell ran, from NVML.
struct GpuSummary {
  bool available = false;
  std::string reason;            ///< Why not available (no library, no device, NVML error).
  std::string name;              ///< Device 0's name.
  double util_mean = 0, util_max = 0;          ///< Percent.
  double memory_used_max_mib = 0, memory_total_mib = 0;
  int samples = 0;
};

/// Both, per cell.
struct TelemetrySummary {
  CpuSummary cpu;
  GpuSummary gpu;
};

}  // namespace refenc::profile
