// What else the machine did while a cell ran, read from /proc (telemetry/proc_sampler.hpp), and the
// thresholds of the manifest's "contamination" block that it is judged against
// (verdict/contamination_rule.hpp: other processes' CPU, CPU steal, the 1-minute load average).
//
//   HostLoad load{.available = true, .cores = 2, .other_cpu_share = 0.40};
//   double others = load.other_cores();                      // 0.8 cores of other work
//   ContaminationSpec spec;                                  // defaults: 0.5 core of other work, 10% steal
#pragma once

#include <string>

namespace refenc::profile {

/// The machine during one cell, from /proc: shares are of all cores' time over the cell
/// (/proc/stat jiffies), the process's own from /proc/self/stat.
struct HostLoad {
  bool available = false;      ///< False when /proc could not be read (then nothing is judged).
  std::string reason;          ///< Why not available.
  unsigned cores = 0;          ///< Online cores.
  double wall_s = 0;           ///< Between the two samples.
  double load1_start = 0;      ///< /proc/loadavg, 1-minute, at the cell's start ...
  double load1_end = 0;        ///< ... and end (it counts refenc's own runnable threads too).
  double busy_share = 0;       ///< Non-idle, non-steal share of all cores.
  double own_cpu_share = 0;    ///< This process's user+system share of all cores.
  double other_cpu_share = 0;  ///< busy_share - own_cpu_share (at least 0): other processes.
  double steal_share = 0;      ///< Time the hypervisor ran something else.

  /// Other processes' CPU in cores (other_cpu_share x cores).
  double other_cores() const { return other_cpu_share * static_cast<double>(cores); }
};

/// Thresholds over which a cell is contaminated (the manifest's "contamination" block).
struct ContaminationSpec {
  bool enabled = true;            ///< false: recorded, never judged.
  double max_other_cores = 0.5;   ///< Other processes' CPU, in cores (0.5: half a core of other work).
  double max_steal_share = 0.10;  ///< CPU steal, as a share of all cores' time.
  double max_load_per_core = 0;   ///< 1-minute load average per core at the cell's start; 0 = not checked.
  int max_reruns = 2;             ///< Re-runs of a contaminated cell before it is kept as contaminated.
};

}  // namespace refenc::profile
