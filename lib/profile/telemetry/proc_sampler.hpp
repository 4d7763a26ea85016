// Reading the machine's load from /proc around a cell, for the contamination rule
// (record/host_load.hpp): /proc/loadavg, the aggregate "cpu" line of /proc/stat (busy, idle and steal
// jiffies) and this process's utime + stime from /proc/self/stat. The parsers take the files' text,
// so tests feed them fake /proc content.
//
//   ProcSnapshot a = read_proc_snapshot();                       // at the cell's start, then the cell runs
//   HostLoad load = host_load_between(a, read_proc_snapshot());  // other_cpu_share, steal_share, ...
//   ProcSnapshot fake = parse_proc_snapshot("0.50 0.40 0.30 1/99 7\n", "cpu  100 0 50 800 10 0 0 40 0 0\n",
//                                           "7 (refenc) R 1 7 7 0 -1 0 0 0 0 0 30 20 0 0\n", 2);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "profile/record/host_load.hpp"

namespace refenc::profile {

/// One reading of /proc.
struct ProcSnapshot {
  bool ok = false;
  std::string reason;  ///< Which file could not be read or parsed.
  unsigned cores = 0;
  double load1 = 0;
  std::uint64_t total = 0;  ///< All jiffies of the "cpu" line (guest time excluded: it is in user).
  std::uint64_t idle = 0;   ///< idle + iowait.
  std::uint64_t steal = 0;
  std::uint64_t own = 0;  ///< This process's utime + stime, in the same clock ticks.
  double at_s = 0;        ///< Monotonic time of the reading, seconds.
};

/// Parses the three files' text. A file that does not parse leaves `ok` false with the reason.
ProcSnapshot parse_proc_snapshot(std::string_view loadavg, std::string_view stat, std::string_view self_stat,
                                 unsigned cores);

/// Reads /proc/loadavg, /proc/stat and /proc/self/stat now.
ProcSnapshot read_proc_snapshot();

/// The load between two readings (unavailable, with the reason, when either failed or no time passed).
HostLoad host_load_between(const ProcSnapshot& start, const ProcSnapshot& end);

/// Where a profile reads the machine's load: read_proc_snapshot, or a fake in tests.
using HostProbe = std::function<ProcSnapshot()>;

}  // namespace refenc::profile
