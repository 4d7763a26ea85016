#include "profile/render/capacity_text.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

namespace refenc::profile {
namespace {

std::string ms(double s) { return std::isfinite(s) ? fmt::format("{:.1f}", 1000 * s) : "inf"; }

}  // namespace

std::string capacity_table(const RunRecord& run) {
  if (!run.capacity || run.capacity->sweeps.empty()) return "";
  const CapacityReport& c = *run.capacity;
  std::ostringstream os;
  os << fmt::format(
      "\ncapacity at the SLO: p95 TTFA <= {:g} ms (goodput: TTFA <= {:g} ms and E2E <= {:g} ms), {} arrivals, "
      "rates {}\n",
      c.slo.ttfa_ms, c.slo.ttfa_ms, c.slo.e2e_ms, c.arrivals, c.rates);
  os << fmt::format("{:<34} {:>4} {:>8} {:>8} {:>8} {:>28} {:>9} {:>5}\n", "sweep", "step", "rate/s", "req/s", "good%",
                    "p95 ttfa ms [95% CI]", "e2e p95", "slo");
  for (const CapacitySweep& s : c.sweeps) {
    std::vector<const RateStep*> by_rate;
    for (const RateStep& st : s.steps) by_rate.push_back(&st);
    std::sort(by_rate.begin(), by_rate.end(),
              [](const RateStep* a, const RateStep* b) { return a->rate_per_s < b->rate_per_s; });
    for (const RateStep* st : by_rate)
      os << fmt::format(
          "{:<34} {:>4} {:>8.2f} {:>8.2f} {:>7.1f}% {:>28} {:>9} {:>5}\n", s.id(), st->index, st->rate_per_s,
          st->throughput_rps, 100 * st->goodput,
          fmt::format("{} [{}, {}]", ms(st->p95_ttfa_s.point), ms(st->p95_ttfa_s.lo), ms(st->p95_ttfa_s.hi)),
          ms(st->p95_e2e_s), st->meets_slo ? "meets" : "MISS");
    os << fmt::format("  {} capacity: {}{:.3g} req/s [{:.3g}, {:.3g}]{}\n", s.id(), s.censored ? ">= " : "",
                      s.capacity_rps.point, s.capacity_rps.lo, s.capacity_rps.hi,
                      s.censored                  ? " (met the SLO at every swept rate)"
                      : s.capacity_rps.point <= 0 ? " (missed the SLO at every swept rate)"
                                                  : "");
  }
  os << "(rate = offered arrivals; req/s = achieved; good% = share of requests within both SLOs; synthesis "
        "modelled)\n";
  return os.str();
}

}  // namespace refenc::profile
