// The comparison page: both runs' verdicts, every compared metric with its interval, regressions
// highlighted.
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/noise_text.hpp"

namespace refenc::profile {

std::string render_compare_html(const RunRecord& baseline, const RunRecord& current, const CompareResult& comparison,
                                const HtmlReportOptions& options) {
  using namespace html;
  double threshold = comparison.threshold;
  int regressions = comparison.regressions;
  std::string title = options.title.empty()
                          ? "refenc compare: " + (current.manifest.name.empty() ? "run" : current.manifest.name)
                          : options.title;
  std::ostringstream os;
  auto who = [](const RunRecord& r, const std::string& dir) {
    const RunContext& c = r.context;
    return "<code>" + e(dir) + "</code>: started " + e(c.started_utc) + " on " + e(c.host) + ", git " +
           e(c.git_revision) + ", manifest " + e(r.manifest.name) + " (sha256 " + e(r.manifest.sha256.substr(0, 12)) +
           "…)";
  };
  os << "<header><h1>" << e(title) << "</h1>\n<p class=\"sub\">Baseline " << who(baseline, comparison.baseline_dir)
     << "<br>Current " << who(current, comparison.current_dir) << "</p>\n";
  os << "<p class=\"" << (regressions > 0 ? "bad" : "note") << "\"><b data-key=\"regressions\">" << regressions
     << "</b> of <b data-key=\"matched\">" << comparison.matched << "</b> matched cells regressed "
     << "beyond " << pct(threshold) << " (p95 E2E or p95 encode slower, or throughput lower, with a 95% interval "
     << "that excludes no change, beyond the metric's noise floor).</p>\n";
  os << "<p class=\"sub\" data-key=\"runs\">" << e(compare_runs_line(comparison)) << "</p>\n";
  if (baseline.manifest.sha256 != current.manifest.sha256)
    os << "<p class=\"warn\">The two runs used different manifests: changes may come from the workload, not the "
          "code.</p>\n";
  os << "<nav><a href=\"#verdicts\">Verdicts</a><a href=\"#changes\">Changes</a><a "
        "href=\"#table\">Table</a></nav></header>\n";

  os << "<section id=\"verdicts\"><h2>Gate verdicts</h2>\n<table><thead><tr><th>model</th><th>baseline</th><th>current"
        "</th><th>current reason</th></tr></thead><tbody>\n";
  std::map<std::string, Verdict> base_v;
  if (baseline.gate)
    for (const ModelVerdict& m : baseline.gate->models) base_v[m.model] = m.verdict;
  if (current.gate) {
    for (const ModelVerdict& m : current.gate->models) {
      auto it = base_v.find(m.model);
      bool changed = it != base_v.end() && it->second != m.verdict;
      os << "<tr" << (changed ? " class=\"regression\"" : "") << "><td>" << e(m.model) << "</td><td>"
         << (it == base_v.end() ? std::string("–") : verdict_badge(it->second)) << "</td><td>"
         << verdict_badge(m.verdict, m.model) << (changed ? " <span class=\"flag\">changed</span>" : "") << "</td><td>"
         << e(m.reason) << "</td></tr>\n";
    }
  }
  os << "</tbody></table></section>\n";

  struct MetricInfo {
    CompareMetric metric;
    const char* title;
    bool higher_is_worse;
  };
  const MetricInfo metrics[] = {
      {CompareMetric::p95_e2e, "p95 end-to-end latency (measured + modelled synthesis)", true},
      {CompareMetric::p95_encode, "p95 reference encode (measured)", true},
      {CompareMetric::p50_preprocessing, "p50 preprocessing (measured; informational, never a regression)", true},
      {CompareMetric::throughput, "throughput (successful req/s)", false}};
  os << "<section id=\"changes\"><h2>Changes per cell</h2>\n<div>\n";
  for (const MetricInfo& mi : metrics) {
    svg::IntervalChart chart{.x_label = "change, current / baseline − 1 (%)"};
    for (const CellChange& c : comparison.cells)
      for (const MetricChange& m : c.metrics) {
        if (m.metric != mi.metric) continue;
        chart.rows.push_back({.label = c.group.label() + (m.regression ? "  REGRESSION" : ""),
                              .point = 100 * m.change.point,
                              .lo = 100 * m.change.lo,
                              .hi = 100 * m.change.hi,
                              .colour = m.regression ? svg::palette::vermillion : svg::palette::blue,
                              .highlight = m.regression});
      }
    if (chart.rows.empty()) continue;
    double t = 100 * threshold * (mi.higher_is_worse ? 1 : -1);
    chart.lines = {
        {.value = 0, .label = "no change", .colour = svg::palette::grey, .dash = "1 0"},
        {.value = t, .label = fmt::format("regression threshold {:+.0f}%", t), .colour = svg::palette::vermillion}};
    os << figure(
        "<h3>" + e(mi.title) + "</h3>" + svg::render(chart),
        fmt::format("Relative change of the {} per matched cell (model/arm/phase/concurrency, repeats pooled): "
                    "square = point, whiskers = 95% percentile-bootstrap interval over requests. {} Highlighted "
                    "rows are regressions: beyond the dashed threshold with an interval excluding zero.",
                    e(mi.title), mi.higher_is_worse ? "Right = slower." : "Left = fewer requests per second."));
  }
  os << "</div></section>\n";

  os << "<section id=\"table\"><h2>All compared metrics</h2>\n<table><thead><tr><th>cell</th><th>metric</th><th "
        "class=\"n\">baseline</th><th class=\"n\">current</th><th class=\"n\">change [95% CI]</th><th "
        "class=\"n\">noise floor</th><th class=\"n\">U test p</th>"
        "<th>runs (baseline | current)</th><th></th></tr>"
        "</thead><tbody>\n";
  for (const CellChange& c : comparison.cells) {
    for (const MetricChange& m : c.metrics) {
      bool tput = m.metric == CompareMetric::throughput;
      double scale = tput ? 1.0 : 1000.0;
      std::string name(to_string(m.metric));
      os << "<tr" << (m.regression ? " class=\"regression\"" : "") << "><td><code>" << e(c.group.label())
         << "</code></td><td>" << e(name) << (tput ? " (req/s)" : " (ms)") << "</td><td class=\"n\">"
         << fixed(scale * m.baseline, 2) << "</td><td class=\"n\">" << fixed(scale * m.current, 2)
         << "</td><td class=\"n\" data-key=\"change." << e(c.group.label()) << "." << e(name) << "\">"
         << interval_text(m.change) << "</td><td class=\"n\" data-key=\"floor." << e(c.group.label()) << "." << e(name)
         << "\" title=\"" << e(m.noise_source) << "\">" << pct(m.noise_floor) << "</td><td class=\"n\">"
         << (m.p_value < 0 ? std::string("–") : fixed(m.p_value, 3)) << "</td><td>" << m.baseline_runs.size() << " | "
         << m.current_runs.size() << "</td><td>" << (m.regression ? "<span class=\"flag\">REGRESSION</span>" : "")
         << "</td></tr>\n";
    }
  }
  os << "</tbody></table>\n";
  if (!comparison.unmatched.empty()) {
    os << "<p class=\"warn\">Cells in one run only (not compared):</p><ul>";
    for (const GroupKey& u : comparison.unmatched) os << "<li><code>" << e(u.label()) << "</code></li>";
    os << "</ul>\n";
  }
  os << "<p class=\"sub\">Method: " << e(comparison.method) << ".</p></section>\n";
  os << "<footer>Written by refenc compare. Self-contained: no script, no network. Colours: Okabe-Ito "
        "palette.</footer>\n";
  return page(title, os.str());
}

}  // namespace refenc::profile
