// The run page's capacity section: per model, p95 TTFA against achieved throughput for each arm's
// rate steps (a Pareto plot: down and to the right is better), the SLO as a line, each arm's capacity,
// and a table of the steps.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"

namespace refenc::profile::html {
namespace {

std::string ms_or_inf(double s) { return std::isfinite(s) ? ms(s) : "∞"; }

/// A sweep's steps in rate order.
std::vector<const RateStep*> by_rate(const CapacitySweep& s) {
  std::vector<const RateStep*> steps;
  for (const RateStep& st : s.steps) steps.push_back(&st);
  std::sort(steps.begin(), steps.end(),
            [](const RateStep* a, const RateStep* b) { return a->rate_per_s < b->rate_per_s; });
  return steps;
}

std::string capacity_text(const CapacitySweep& s) {
  return fmt::format("{}{} req/s [{}, {}]", s.censored ? "≥ " : "", fixed(s.capacity_rps.point, 2),
                     fixed(s.capacity_rps.lo, 2), fixed(s.capacity_rps.hi, 2));
}

}  // namespace

std::string capacity_section(const RunRecord& run) {
  if (!run.capacity || run.capacity->sweeps.empty()) return "";
  const CapacityReport& cap = *run.capacity;
  std::ostringstream os;
  os << "<section id=\"capacity\"><h2>Capacity under the SLO: latency against throughput</h2>\n";
  os << "<p>Open-loop " << e(cap.arrivals) << " arrivals at each rate step (rates " << e(cap.rates)
     << "), a fresh cold service per step. SLO: p95 TTFA ≤ " << fixed(cap.slo.ttfa_ms, 0)
     << " ms; goodput counts requests with TTFA ≤ " << fixed(cap.slo.ttfa_ms, 0) << " ms and E2E ≤ "
     << fixed(cap.slo.e2e_ms, 0)
     << " ms. Capacity: the highest rate whose p95 TTFA meets the SLO, below the lowest rate that misses "
        "it; intervals are percentile-bootstrap over each step's requests. TTFA adds measured "
        "preprocessing and encode to modelled synthesis.</p>\n<div class=\"grid\">\n";
  std::vector<std::string> models;
  for (const CapacitySweep& s : cap.sweeps)
    if (std::find(models.begin(), models.end(), s.model) == models.end()) models.push_back(s.model);
  for (const std::string& model : models) {
    svg::LineChart chart{
        .title = model, .x_label = "achieved throughput (requests/s)", .y_label = "p95 time to first audio (ms)"};
    chart.x_min = 0, chart.y_min = 0;
    // Steps far above the SLO would flatten the knee: those above 4x the SLO are listed, not drawn.
    const double y_cap = 4 * cap.slo.ttfa_ms;
    double x_max = 0, y_max = cap.slo.ttfa_ms;
    std::size_t off_chart = 0;
    std::string caption;
    for (const CapacitySweep& s : cap.sweeps) {
      if (s.model != model) continue;
      svg::Series series{.name = arm_label(s.arm), .colour = arm_colour(s.arm), .markers = true};
      for (const RateStep* st : by_rate(s)) {
        x_max = std::max(x_max, st->throughput_rps);
        if (!std::isfinite(st->p95_ttfa_s.point) || 1000 * st->p95_ttfa_s.point > y_cap) {
          ++off_chart;
          continue;
        }
        series.points.push_back({st->throughput_rps, 1000 * st->p95_ttfa_s.point});
        y_max = std::max(y_max, 1000 * st->p95_ttfa_s.point);
      }
      chart.series.push_back(std::move(series));
      caption += fmt::format("{}{}: capacity {}", caption.empty() ? "" : "; ", arm_label(s.arm), capacity_text(s));
    }
    chart.y_max = y_max * 1.05;
    if (off_chart > 0)
      caption += fmt::format(" ({} step{} with p95 TTFA above {} ms, 4x the SLO, in the table only)", off_chart,
                             off_chart == 1 ? "" : "s", fixed(y_cap, 0));
    chart.series.push_back({.name = "SLO (p95 TTFA)",
                            .colour = svg::palette::black,
                            .dash = "4 3",
                            .points = {{0, cap.slo.ttfa_ms}, {std::max(x_max, 1e-9) * 1.05, cap.slo.ttfa_ms}},
                            .width = 1});
    os << figure(svg::render(chart), e(caption) + ". Each marker is a rate step (measured + modelled).",
                 "capacity-" + model);
  }
  os << "</div>\n<table><tr><th>sweep</th><th>step</th><th>rate (req/s)</th><th>achieved (req/s)</th>"
        "<th>goodput</th><th>p95 TTFA (ms) [CI]</th><th>p95 E2E (ms)</th><th>SLO</th></tr>\n";
  for (const CapacitySweep& s : cap.sweeps) {
    for (const RateStep* st : by_rate(s))
      os << "<tr><td>" << e(s.id()) << "</td><td>" << st->index << "</td><td>" << fixed(st->rate_per_s, 2)
         << "</td><td>" << fixed(st->throughput_rps, 2) << "</td><td>" << pct(st->goodput) << "</td><td>"
         << ms_or_inf(st->p95_ttfa_s.point) << " [" << ms_or_inf(st->p95_ttfa_s.lo) << ", "
         << ms_or_inf(st->p95_ttfa_s.hi) << "]</td><td>" << ms(st->p95_e2e_s) << "</td><td>"
         << (st->meets_slo ? "meets" : "<b>misses</b>") << "</td></tr>\n";
    os << "<tr><td colspan=\"8\">" << e(s.id()) << " capacity: " << e(capacity_text(s)) << "</td></tr>\n";
  }
  os << "</table></section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
