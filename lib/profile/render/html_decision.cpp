// The run page's decision section: the gate's verdict per model, its evidence and its reasons.
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"
#include "profile/render/noise_text.hpp"

namespace refenc::profile::html {
namespace {

std::string level_rows(const ModelVerdict& m) {
  std::ostringstream os;
  os << "<table><thead><tr><th>concurrency</th><th>cold M4a shares of mean E2E<br>(pre / encode / synth / "
        "queue)</th><th>top stage</th><th class=\"n\">p95 E2E reduction [CI]</th><th class=\"n\">throughput gain "
        "[CI]</th><th class=\"n\">p95 E2E ms<br>M4a → M4b</th><th class=\"n\">req/s<br>M4a → M4b</th>"
        "<th>outcome</th></tr></thead><tbody>\n";
  for (const LevelResult& c : m.levels) {
    std::string conc = std::to_string(c.concurrency);
    const StageShares& sh = c.shares_m4a;
    std::string key = e(m.model) + ".c" + e(conc);
    os << "<tr><td class=\"n\">" << e(conc) << "</td><td>" << pct(sh.preprocessing) << " / " << pct(sh.encode) << " / "
       << pct(sh.synthesis) << " / " << pct(sh.queue) << "</td><td>"
       << e(c.top_stage == Stage::synthesis_end ? std::string("synthesis") : std::string(to_string(c.top_stage)))
       << "</td><td class=\"n\" data-key=\"reduction." << key << "\">" << interval_text(c.p95_e2e_reduction)
       << "</td><td class=\"n\" data-key=\"gain." << key << "\">" << interval_text(c.throughput_gain)
       << "</td><td class=\"n\">" << ms(c.m4a.p95_e2e_s) << " → " << ms(c.m4b.p95_e2e_s) << "</td><td class=\"n\">"
       << fixed(c.m4a.throughput_rps, 2) << " → " << fixed(c.m4b.throughput_rps, 2) << "</td><td>"
       << verdict_badge(c.outcome) << "</td></tr>\n";
  }
  os << "</tbody></table>\n<ul class=\"reason\">";
  for (const LevelResult& c : m.levels) os << "<li>" << e(c.reason) << "</li>";
  os << "</ul>\n";
  return os.str();
}

std::string evidence_chart(const ModelVerdict& m, const GateSpec& spec) {
  svg::IntervalChart chart{.x_label = "M4b against M4a, cold cache (%)"};
  for (const LevelResult& c : m.levels) {
    const Interval &r = c.p95_e2e_reduction, &g = c.throughput_gain;
    std::string conc = "c" + std::to_string(c.concurrency);
    chart.rows.push_back({.label = conc + " p95 E2E reduction",
                          .point = 100 * r.point,
                          .lo = 100 * r.lo,
                          .hi = 100 * r.hi,
                          .colour = svg::palette::blue});
    chart.rows.push_back({.label = conc + " throughput gain",
                          .point = 100 * g.point,
                          .lo = 100 * g.lo,
                          .hi = 100 * g.hi,
                          .colour = svg::palette::vermillion});
  }
  double lat_t = spec.latency_reduction, tput_t = spec.throughput_gain;
  chart.lines = {{.value = 0, .label = "no change", .colour = svg::palette::grey, .dash = "1 0"},
                 {.value = 100 * lat_t, .label = "p95 reduction threshold " + pct(lat_t), .colour = svg::palette::blue},
                 {.value = 100 * tput_t,
                  .label = "throughput threshold " + pct(tput_t),
                  .colour = svg::palette::vermillion,
                  .dash = "7 3"}};
  return figure(svg::render(chart),
                fmt::format("Gate evidence for {}: square = point estimate, whiskers = {:.0f}% percentile-bootstrap "
                            "interval over requests of the cold cells (repeats pooled). Blue: reduction of p95 "
                            "end-to-end latency (1 − p95 M4b / p95 M4a); vermillion: throughput gain (M4b / M4a − 1). "
                            "A row clears its dashed threshold when its whole interval lies right of it. Measured: "
                            "preprocessing, reference encode, queueing; modelled: synthesis.",
                            e(m.model), 100 * spec.confidence));
}

}  // namespace

std::string decision_section(const RunRecord& run) {
  const GateSpec& spec = run.gate ? run.gate->options.spec : run.manifest.gate;
  std::ostringstream os;
  os << "<section id=\"decision\"><h2>M4b decision (different-key batching)</h2>\n";
  os << "<p class=\"sub\">Thresholds: <b data-key=\"threshold.latency\">" << pct(spec.latency_reduction)
     << "</b> lower p95 end-to-end latency, or <b data-key=\"threshold.throughput\">" << pct(spec.throughput_gain)
     << "</b> more throughput, of M4b against M4a on a cold cache, judged on the lower bound of a "
     << fmt::format("{:.0f}", 100 * spec.confidence) << "% bootstrap interval ("
     << (run.gate ? std::to_string(spec.bootstrap_resamples) : "?") << " resamples, seed "
     << (run.gate ? std::to_string(run.gate->options.seed) : "?")
     << "). GO when a lower bound clears its threshold; INCONCLUSIVE when only a point estimate does; NO-GO "
        "otherwise, or when reference encode is not the largest stage of cold M4a latency; MISSING_ARM when a "
        "profiled concurrency level lacks a cold arm. A model's verdict is the worst over its concurrencies. Gate "
        "exit code: <b data-key=\"gate.exit_code\">"
     << (run.gate ? std::to_string(run.gate->exit_code) : "?") << "</b>.</p>\n";
  if (run.status == "interrupted")
    os << "<p class=\"bad\">This run was <b>interrupted</b>: the verdicts rest on the cells that finished.</p>\n";
  if (!run.gate || run.gate->models.empty()) os << "<p class=\"note\">The report holds no gate verdict.</p>\n";
  if (run.gate) {
    for (const ModelVerdict& m : run.gate->models) {
      os << "<div class=\"card c-" << e(verdict_class(m.verdict)) << "\"><h3>" << e(m.model) << " &nbsp;"
         << verdict_badge(m.verdict, m.model) << "</h3>\n<div class=\"grade\">Evidence: <span data-key=\"grade."
         << e(m.model) << "\">" << e(m.evidence_grade) << "</span></div>\n";
      if (m.levels.empty())
        os << "<p class=\"reason\">" << e(m.reason) << "</p>\n";
      else
        os << level_rows(m) << evidence_chart(m, spec);
      if (!m.parity.empty())
        os << "<p class=\"reason\" data-key=\"parity." << e(m.model) << "\">" << e(m.parity) << "</p>\n";
      for (const std::string& line : verdict_noise_lines(m))
        os << "<p class=\"reason\" data-key=\"noise." << e(m.model) << "\">" << e(line) << "</p>\n";
      os << "</div>\n";
    }
  }
  if (!run.skipped.empty()) {
    os << "<h3>Skipped</h3><ul>";
    for (const SkippedArm& s : run.skipped)
      os << "<li>" << e(s.model) << " " << e(arm_label(s.arm)) << ": " << e(s.reason) << "</li>";
    os << "</ul>\n";
  }
  os << "</section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
