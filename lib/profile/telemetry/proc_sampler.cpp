#include "profile/telemetry/proc_sampler.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace refenc::profile {
namespace {

std::string slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

ProcSnapshot parse_proc_snapshot(std::string_view loadavg, std::string_view stat, std::string_view self_stat,
                                 unsigned cores) {
  ProcSnapshot s;
  s.cores = cores;
  {
    std::istringstream in{std::string(loadavg)};
    if (!(in >> s.load1)) {
      s.reason = "/proc/loadavg: no load average";
      return s;
    }
  }
  {
    std::istringstream in{std::string(stat)};
    std::string cpu;
    std::uint64_t v[10] = {};
    int n = 0;
    if (in >> cpu && cpu == "cpu")
      for (; n < 10 && in >> v[n]; ++n) {}
    if (n < 4) {
      s.reason = "/proc/stat: no aggregate cpu line";
      return s;
    }
    for (int i = 0; i < std::min(n, 8); ++i) s.total += v[i];  // guest, guest_nice: already in user, nice
    s.idle = v[3] + v[4];
    s.steal = v[7];
  }
  {
    // Fields after ") ": state is field 3; utime and stime are fields 14 and 15.
    auto close = self_stat.rfind(')');
    std::istringstream in{std::string(close == std::string_view::npos ? "" : self_stat.substr(close + 1))};
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    int i = 3;
    for (; i <= 15 && in >> field; ++i) {
      try {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
      } catch (const std::exception&) {
        break;
      }
    }
    if (i <= 15) {
      s.reason = "/proc/self/stat: no utime and stime";
      return s;
    }
    s.own = utime + stime;
  }
  s.ok = true;
  return s;
}

ProcSnapshot read_proc_snapshot() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0) cores = static_cast<unsigned>(online);
  ProcSnapshot s = parse_proc_snapshot(slurp("/proc/loadavg"), slurp("/proc/stat"), slurp("/proc/self/stat"), cores);
  s.at_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return s;
}

HostLoad host_load_between(const ProcSnapshot& a, const ProcSnapshot& b) {
  HostLoad h;
  h.cores = b.cores ? b.cores : a.cores;
  if (!a.ok || !b.ok) {
    h.reason = !a.ok ? a.reason : b.reason;
    return h;
  }
  if (b.total <= a.total) {
    h.reason = "/proc/stat: no time passed between the readings";
    return h;
  }
  h.available = true;
  h.wall_s = std::max(0.0, b.at_s - a.at_s);
  h.load1_start = a.load1;
  h.load1_end = b.load1;
  const std::uint64_t total = b.total - a.total;
  const std::uint64_t idle = b.idle >= a.idle ? b.idle - a.idle : 0;
  const std::uint64_t steal = b.steal >= a.steal ? b.steal - a.steal : 0;
  const std::uint64_t busy = total > idle + steal ? total - idle - steal : 0;
  const std::uint64_t own = b.own >= a.own ? b.own - a.own : 0;
  h.busy_share = share(busy, total);
  h.own_cpu_share = std::min(h.busy_share, share(own, total));
  h.other_cpu_share = std::max(0.0, h.busy_share - h.own_cpu_share);
  h.steal_share = share(steal, total);
  return h;
}

}  // namespace refenc::profile
