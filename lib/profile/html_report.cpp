#include "profile/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/run_report.hpp"
#include "profile/svg_chart.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;
using svg::escape;

// ---------------------------------------------------------------------------------------------------
// Reading the report defensively: a missing or mistyped field renders as empty, never throws.

std::string str(const json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return fallback;
  return v.dump();
}

double num(const json& j, const char* key, double fallback = 0) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return fallback;
  return j[key].get<double>();
}

bool flag(const json& j, const char* key) { return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>(); }

const json& sub(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

const json& arr(const json& j, const char* key) {
  static const json empty = json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}

std::string e(const std::string& s) { return escape(s); }
std::string pct(double v) { return fmt::format("{:.1f}%", 100 * v); }
std::string ms(double seconds) { return fmt::format("{:.1f}", 1000 * seconds); }
std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

std::string arm_label(const std::string& arm) {
  if (arm == "m4a") return "M4a";
  if (arm == "m4b") return "M4b";
  return arm;
}

const char* arm_colour(const std::string& arm) { return arm == "m4b" ? svg::palette::vermillion : svg::palette::blue; }

int phase_rank(const std::string& phase) { return phase == "cold" ? 0 : phase == "warm" ? 1 : phase == "warm-disk" ? 2 : 3; }

std::string phase_dash(const std::string& phase) {
  return phase == "cold" ? "" : phase == "warm" ? "7 4" : "2 3";
}

std::string verdict_badge(const std::string& verdict, const std::string& model = {}) {
  std::string cls = verdict;
  std::replace(cls.begin(), cls.end(), '_', '-');
  std::string attrs = model.empty() ? "" : " data-model=\"" + e(model) + "\" data-verdict=\"" + e(verdict) + "\"";
  return "<span class=\"verdict v-" + e(cls) + "\"" + attrs + ">" + e(verdict) + "</span>";
}

std::string interval_text(const json& i) {
  return fmt::format("{} [{}, {}]", pct(num(i, "point")), fixed(100 * num(i, "lo"), 1), fixed(100 * num(i, "hi"), 1));
}

// ---------------------------------------------------------------------------------------------------
// Per-request data and grouping of cells over repeats.

struct Req {
  bool ok = true;
  double e2e = 0;
};

struct Group {
  std::string model, arm, phase;
  int concurrency = 0;
  std::vector<const json*> cells;
  std::vector<double> e2e;   // Successful requests' E2E, pooled over repeats (empty without requests).
  std::string label() const { return fmt::format("{} {} c{}", arm_label(arm), phase, concurrency); }
};

using GroupKey = std::tuple<int, int, int, int, std::string, std::string>;  // model, conc, arm, phase rank

std::map<GroupKey, Group> group_cells(const json& report, const RequestRows* requests) {
  std::map<std::string, int> model_rank;
  for (const json& m : arr(report, "models")) model_rank.emplace(str(m, "name"), static_cast<int>(model_rank.size()));
  std::map<GroupKey, Group> groups;
  for (const json& c : arr(report, "cells")) {
    std::string model = str(c, "model"), arm = str(c, "arm"), phase = str(c, "phase");
    int conc = static_cast<int>(num(c, "concurrency"));
    auto mr = model_rank.find(model);
    GroupKey key{mr == model_rank.end() ? 1 << 20 : mr->second, conc, arm == "m4a" ? 0 : arm == "m4b" ? 1 : 2,
                 phase_rank(phase), model, arm + "/" + phase};
    Group& g = groups[key];
    g.model = model, g.arm = arm, g.phase = phase, g.concurrency = conc;
    g.cells.push_back(&c);
    if (requests) {
      auto it = requests->find(str(c, "id"));
      if (it != requests->end())
        for (const json& r : it->second)
          if (str(r, "outcome") != "failed") g.e2e.push_back(num(r, "e2e_s"));
    }
  }
  for (auto& [k, g] : groups) std::sort(g.e2e.begin(), g.e2e.end());
  return groups;
}

std::vector<std::string> model_names(const json& report) {
  std::vector<std::string> names;
  for (const json& m : arr(report, "models")) names.push_back(str(m, "name"));
  for (const json& c : arr(report, "cells")) {
    std::string m = str(c, "model");
    if (std::find(names.begin(), names.end(), m) == names.end()) names.push_back(m);
  }
  return names;
}

/// splitmix64: a small seeded generator, so that the page is the same for the same report.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

struct Throughput {
  double point = 0, lo = 0, hi = 0;
  bool interval = false;
  std::string method;  // "bootstrap", "repeats" or "" (none)
  std::vector<double> repeats;
};

Throughput group_throughput(const Group& g, const HtmlReportOptions& o) {
  Throughput t;
  double done = 0, wall = 0;
  for (const json* c : g.cells) {
    double w = num(*c, "wall_s"), r = num(*c, "throughput_rps");
    done += r * w;
    wall += w;
    t.repeats.push_back(r);
  }
  t.point = wall > 0 ? done / wall : (t.repeats.empty() ? 0 : t.repeats.front());
  if (g.e2e.size() >= 2 && o.resamples > 0) {
    // Little's law at fixed concurrency: a replicate scales the observed throughput by
    // mean E2E / resampled mean E2E (the gate's construction).
    double mean = std::accumulate(g.e2e.begin(), g.e2e.end(), 0.0) / static_cast<double>(g.e2e.size());
    Rng rng{o.seed ^ std::hash<std::string>{}(g.model + g.arm + g.phase) ^ static_cast<std::uint64_t>(g.concurrency)};
    std::vector<double> reps;
    reps.reserve(static_cast<std::size_t>(o.resamples));
    for (int b = 0; b < o.resamples; ++b) {
      double s = 0;
      for (std::size_t i = 0; i < g.e2e.size(); ++i) s += g.e2e[rng.next() % g.e2e.size()];
      double m = s / static_cast<double>(g.e2e.size());
      reps.push_back(m > 0 ? t.point * mean / m : t.point);
    }
    std::sort(reps.begin(), reps.end());
    double a = (1 - o.confidence) / 2;
    auto at = [&](double q) {
      auto i = static_cast<std::size_t>(std::clamp(q * static_cast<double>(reps.size() - 1), 0.0,
                                                   static_cast<double>(reps.size() - 1)));
      return reps[i];
    };
    t.lo = at(a), t.hi = at(1 - a), t.interval = true, t.method = "bootstrap";
  } else if (t.repeats.size() >= 2) {
    auto [lo, hi] = std::minmax_element(t.repeats.begin(), t.repeats.end());
    t.lo = *lo, t.hi = *hi, t.interval = true, t.method = "repeats";
  }
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Page shell.

const char* page_css = R"CSS(
:root{--fg:#1b1b1b;--muted:#555;--rule:#d6d6d6;--go:#009E73;--nogo:#D55E00;--inc:#E69F00;--na:#8C8C8C;--miss:#CC79A7}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);
  margin:0 auto;max-width:1180px;padding:1.2rem 1.5rem 3rem;line-height:1.45;font-size:15px;background:#fff}
h1{font-size:1.6rem;margin:.2rem 0 .3rem}h2{font-size:1.25rem;margin:2rem 0 .6rem;padding-bottom:.2rem;
  border-bottom:2px solid var(--fg)}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.sub{color:var(--muted);margin:0 0 .8rem}
nav{font-size:.9rem;margin:.4rem 0 1rem}nav a{margin-right:.9rem;color:#0072B2}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.86rem;width:100%}
th,td{border-bottom:1px solid var(--rule);padding:.25rem .45rem;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{display:inline-block;white-space:nowrap;font-weight:700;padding:.05rem .5rem;border-radius:.25rem;color:#fff;
  letter-spacing:.02em;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.v-GO{background:var(--go)}.v-NO-GO{background:var(--nogo)}.v-INCONCLUSIVE{background:var(--inc);color:#000}
.v-NOT-APPLICABLE{background:var(--na)}.v-MISSING-ARM{background:var(--miss);color:#000}
.card{border:1px solid var(--rule);border-left:6px solid var(--na);border-radius:.3rem;padding:.6rem .9rem;margin:.8rem 0}
.card.c-GO{border-left-color:var(--go)}.card.c-NO-GO{border-left-color:var(--nogo)}
.card.c-INCONCLUSIVE{border-left-color:var(--inc)}.card.c-MISSING-ARM{border-left-color:var(--miss)}
.card h3{margin:.1rem 0 .3rem;font-size:1.15rem}.grade{color:var(--muted);font-size:.9rem}
.reason{margin:.3rem 0}
.note{background:#f6f6f6;border-left:4px solid var(--na);padding:.4rem .7rem;margin:.5rem 0;font-size:.9rem}
.warn{background:#FFF4DC;border-left:4px solid var(--inc);padding:.4rem .7rem;margin:.5rem 0}
.bad{background:#F9E0CF;border-left:4px solid var(--nogo);padding:.4rem .7rem;margin:.5rem 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:.8rem 1.2rem}
figure{margin:.4rem 0 1rem;break-inside:avoid;page-break-inside:avoid}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.84rem;color:var(--muted);margin-top:.2rem}
tr.regression td{background:#F9E0CF;font-weight:600}
.flag{font-weight:700;color:#8a2f00}
code{font-size:.85em;background:#f3f3f3;padding:0 .2em;border-radius:.15rem;overflow-wrap:anywhere}
td.id code{white-space:nowrap}.tw{overflow-x:auto;margin:.4rem 0 1rem}.tw table{margin:0;font-size:.8rem}ul.w{font-size:.85rem}
.grid>.note{align-self:start}
footer{margin-top:2rem;color:var(--muted);font-size:.8rem}
@media (max-width:700px){.grid{grid-template-columns:1fr}body{padding:.8rem}}
@media print{body{max-width:none;padding:0;font-size:10.5pt}h3{break-after:avoid;page-break-after:avoid}.tw{overflow:visible}td.id code{white-space:normal}nav{display:none}h2{break-after:avoid;page-break-after:avoid}
  .card,table,figure{break-inside:avoid;page-break-inside:avoid}.grid{grid-template-columns:1fr 1fr}
  a{color:inherit;text-decoration:none}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
)CSS";

std::string page(const std::string& title, const std::string& body) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
     << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">\n"
     << "<title>" << e(title) << "</title>\n<style>" << page_css << "</style>\n</head>\n<body>\n"
     << body << "</body>\n</html>\n";
  return os.str();
}

std::string figure(const std::string& svg_markup, const std::string& caption, const std::string& id = {}) {
  return "<figure" + (id.empty() ? std::string() : " id=\"" + e(id) + "\"") + ">" + svg_markup + "<figcaption>" +
         caption + "</figcaption></figure>\n";
}

// ---------------------------------------------------------------------------------------------------
// Sections of the report page.

std::string decision_section(const json& report) {
  const json& gate = sub(report, "gate");
  const json& opts = sub(gate, "options");
  double lat_t = num(opts, "latency_reduction", num(sub(sub(report, "manifest"), "gate"), "latency_reduction", 0.15));
  double tput_t = num(opts, "throughput_gain", num(sub(sub(report, "manifest"), "gate"), "throughput_gain", 0.20));
  double conf = num(opts, "confidence", 0.95);
  std::ostringstream os;
  os << "<section id=\"decision\"><h2>M4b decision (different-key batching)</h2>\n";
  os << "<p class=\"sub\">Thresholds: <b data-key=\"threshold.latency\">" << pct(lat_t)
     << "</b> lower p95 end-to-end latency, or <b data-key=\"threshold.throughput\">" << pct(tput_t)
     << "</b> more throughput, of M4b against M4a on a cold cache, judged on the lower bound of a "
     << fmt::format("{:.0f}", 100 * conf) << "% bootstrap interval ("
     << e(str(opts, "bootstrap_resamples", "?")) << " resamples, seed " << e(str(opts, "seed", "?"))
     << "). GO when a lower bound clears its threshold; INCONCLUSIVE when only a point estimate does; NO-GO "
        "otherwise, or when reference encode is not the largest stage of cold M4a latency. A model's verdict is "
        "the worst over its concurrencies. Gate exit code: <b data-key=\"gate.exit_code\">"
     << e(str(gate, "exit_code", "?")) << "</b>.</p>\n";
  if (str(report, "status") == "interrupted")
    os << "<p class=\"bad\">This run was <b>interrupted</b>: the verdicts rest on the cells that finished.</p>\n";
  const json& verdicts = arr(gate, "models");
  if (verdicts.empty()) os << "<p class=\"note\">The report holds no gate verdict.</p>\n";
  for (const json& m : verdicts) {
    std::string model = str(m, "model"), verdict = str(m, "verdict", "?");
    std::string cls = verdict;
    std::replace(cls.begin(), cls.end(), '_', '-');
    os << "<div class=\"card c-" << e(cls) << "\"><h3>" << e(model) << " &nbsp;" << verdict_badge(verdict, model)
       << "</h3>\n<div class=\"grade\">Evidence: <span data-key=\"grade." << e(model) << "\">"
       << e(str(m, "evidence_grade", "unknown")) << "</span></div>\n";
    const json& per = arr(m, "concurrency");
    if (per.empty()) {
      os << "<p class=\"reason\">" << e(str(m, "reason")) << "</p>\n";
    } else {
      os << "<table><thead><tr><th>concurrency</th><th>cold M4a shares of mean E2E<br>(pre / encode / synth / "
            "queue)</th><th>top stage</th><th class=\"n\">p95 E2E reduction [CI]</th><th class=\"n\">throughput gain "
            "[CI]</th><th class=\"n\">p95 E2E ms<br>M4a → M4b</th><th class=\"n\">req/s<br>M4a → M4b</th>"
            "<th>outcome</th></tr></thead><tbody>\n";
      for (const json& c : per) {
        std::string conc = str(c, "concurrency");
        const json& sh = sub(c, "stage_shares_m4a");
        const json &a = sub(c, "m4a"), &b = sub(c, "m4b");
        std::string key = e(model) + ".c" + e(conc);
        os << "<tr><td class=\"n\">" << e(conc) << "</td><td>" << pct(num(sh, "preprocessing")) << " / "
           << pct(num(sh, "encode")) << " / " << pct(num(sh, "synthesis")) << " / " << pct(num(sh, "queue"))
           << "</td><td>" << e(str(c, "top_stage")) << "</td><td class=\"n\" data-key=\"reduction." << key << "\">"
           << interval_text(sub(c, "p95_e2e_reduction")) << "</td><td class=\"n\" data-key=\"gain." << key << "\">"
           << interval_text(sub(c, "throughput_gain")) << "</td><td class=\"n\">"
           << (a.contains("p95_e2e_s") ? ms(num(a, "p95_e2e_s")) + " → " + ms(num(b, "p95_e2e_s")) : "–")
           << "</td><td class=\"n\">"
           << (a.contains("throughput_rps") ? fixed(num(a, "throughput_rps"), 2) + " → " + fixed(num(b, "throughput_rps"), 2)
                                            : "–")
           << "</td><td>" << verdict_badge(str(c, "outcome", "?")) << "</td></tr>\n";
      }
      os << "</tbody></table>\n<ul class=\"reason\">";
      for (const json& c : per) os << "<li>" << e(str(c, "reason")) << "</li>";
      os << "</ul>\n";
      svg::IntervalChart chart{.x_label = "M4b against M4a, cold cache (%)"};
      for (const json& c : per) {
        const json& r = sub(c, "p95_e2e_reduction");
        const json& g = sub(c, "throughput_gain");
        chart.rows.push_back({.label = "c" + str(c, "concurrency") + " p95 E2E reduction", .point = 100 * num(r, "point"),
                              .lo = 100 * num(r, "lo"), .hi = 100 * num(r, "hi"), .colour = svg::palette::blue});
        chart.rows.push_back({.label = "c" + str(c, "concurrency") + " throughput gain", .point = 100 * num(g, "point"),
                              .lo = 100 * num(g, "lo"), .hi = 100 * num(g, "hi"), .colour = svg::palette::vermillion});
      }
      chart.lines = {{.value = 0, .label = "no change", .colour = svg::palette::grey, .dash = "1 0"},
                     {.value = 100 * lat_t, .label = "p95 reduction threshold " + pct(lat_t), .colour = svg::palette::blue},
                     {.value = 100 * tput_t, .label = "throughput threshold " + pct(tput_t),
                      .colour = svg::palette::vermillion, .dash = "7 3"}};
      os << figure(svg::render(chart),
                   fmt::format("Gate evidence for {}: square = point estimate, whiskers = {:.0f}% percentile-bootstrap "
                               "interval over requests of the cold cells (repeats pooled). Blue: reduction of p95 "
                               "end-to-end latency (1 − p95 M4b / p95 M4a); vermillion: throughput gain (M4b / M4a − 1). "
                               "A row clears its dashed threshold when its whole interval lies right of it. Measured: "
                               "preprocessing, reference encode, queueing; modelled: synthesis.",
                               e(model), 100 * conf));
    }
    os << "</div>\n";
  }
  const json& skipped = arr(report, "skipped");
  if (!skipped.empty()) {
    os << "<h3>Skipped</h3><ul>";
    for (const json& s : skipped)
      os << "<li>" << e(str(s, "model")) << " " << e(arm_label(str(s, "arm"))) << ": " << e(str(s, "reason")) << "</li>";
    os << "</ul>\n";
  }
  os << "</section>\n";
  return os.str();
}

std::vector<svg::Point> cdf_points(const std::vector<double>& sorted_seconds) {
  std::vector<svg::Point> pts;
  std::size_t n = sorted_seconds.size();
  if (n == 0) return pts;
  std::size_t stride = std::max<std::size_t>(1, n / 400);  // At most ~400 steps per curve.
  pts.push_back({1000 * sorted_seconds.front(), 0});
  for (std::size_t i = 0; i < n; i += stride) pts.push_back({1000 * sorted_seconds[i], static_cast<double>(i + 1) / n});
  if (pts.back().y < 1) pts.push_back({1000 * sorted_seconds.back(), 1});
  return pts;
}

std::string latency_section(const json& report, const std::map<GroupKey, Group>& groups, bool have_requests) {
  std::ostringstream os;
  os << "<section id=\"latency\"><h2>End-to-end latency: M4a against M4b</h2>\n";
  if (!have_requests)
    os << "<p class=\"note\">requests.jsonl was not found beside report.json: the curves below join the report's "
          "percentiles (p50, p90, p95, p99, max) and are not the full distributions.</p>\n";
  os << "<div class=\"grid\">\n";
  std::map<std::pair<std::string, int>, std::vector<const Group*>> panels;
  std::vector<std::pair<std::string, int>> order;
  for (const auto& [k, g] : groups) {
    auto key = std::make_pair(g.model, g.concurrency);
    if (!panels.count(key)) order.push_back(key);
    panels[key].push_back(&g);
  }
  for (const auto& key : order) {
    svg::LineChart chart{.title = fmt::format("{}, concurrency {}", key.first, key.second),
                         .x_label = "end-to-end latency (ms)", .y_label = "fraction of requests ≤ latency"};
    chart.y_min = 0, chart.y_max = 1, chart.x_min = 0;
    bool from_requests = true;
    std::size_t n_requests = 0;
    for (const Group* g : panels[key]) {
      svg::Series s{.name = arm_label(g->arm) + " " + g->phase, .colour = arm_colour(g->arm), .dash = phase_dash(g->phase)};
      if (!g->e2e.empty()) {
        s.points = cdf_points(g->e2e);
        s.step = true;
        n_requests += g->e2e.size();
      } else {
        from_requests = false;
        double k = 0;
        std::map<std::string, double> q;
        for (const json* c : g->cells) {
          const json& st = sub(sub(*c, "stages"), "e2e");
          if (num(st, "count") <= 0) continue;
          ++k;
          for (const char* p : {"p50", "p90", "p95", "p99", "max"}) q[p] += num(st, p);
        }
        if (k == 0) continue;
        s.points = {{1000 * q["p50"] / k, 0.5}, {1000 * q["p90"] / k, 0.9}, {1000 * q["p95"] / k, 0.95},
                    {1000 * q["p99"] / k, 0.99}, {1000 * q["max"] / k, 1.0}};
        s.markers = true;
        s.name += k > 1 ? fmt::format(" (mean of {} repeats' percentiles)", k) : " (percentiles)";
      }
      chart.series.push_back(std::move(s));
    }
    std::string caption = fmt::format(
        "Measured plus modelled: E2E = queueing + preprocessing + reference encode (measured) + synthesis "
        "(modelled). Colour: arm (blue M4a, vermillion M4b); line style: cache phase (solid cold, dashed warm, "
        "dotted warm-disk). ");
    caption += from_requests ? fmt::format("Empirical CDF of {} successful requests, repeats pooled.", n_requests)
                             : "Drawn from the report's percentiles (p50, p90, p95, p99, max; nearest rank): "
                               "requests.jsonl was not available, so points are joined by straight lines.";
    os << figure(svg::render(chart), caption);
  }
  os << "</div></section>\n";
  return os.str();
}

std::string stages_section(const json& report, const std::map<GroupKey, Group>& groups) {
  std::ostringstream os;
  os << "<section id=\"stages\"><h2>Where the time goes: stage breakdown per cell</h2>\n";
  for (const std::string& model : model_names(report)) {
    svg::StackedBarChart chart{.x_label = "mean time per successful request (ms)"};
    chart.segments = {{"queueing", svg::palette::grey},
                      {"preprocessing", svg::palette::sky_blue},
                      {"reference encode", svg::palette::orange},
                      {"synthesis", svg::palette::green, true}};
    for (const auto& [k, g] : groups) {
      if (g.model != model) continue;
      double n = 0, pre = 0, enc = 0, syn = 0, e2e = 0;
      for (const json* c : g.cells) {
        const json& st = sub(*c, "stages");
        double cn = num(sub(st, "e2e"), "count");
        n += cn;
        pre += cn * num(sub(st, "preprocessing"), "mean");
        enc += cn * num(sub(st, "encode"), "mean");
        syn += cn * num(sub(st, "synthesis_end"), "mean");
        e2e += cn * num(sub(st, "e2e"), "mean");
      }
      if (n <= 0) continue;
      pre /= n, enc /= n, syn /= n, e2e /= n;
      double queue = std::max(0.0, e2e - pre - enc - syn);
      chart.rows.push_back(g.label() + (g.cells.size() > 1 ? fmt::format(" ×{}", g.cells.size()) : ""));
      chart.values.push_back({1000 * queue, 1000 * pre, 1000 * enc, 1000 * syn});
    }
    if (chart.rows.empty()) continue;
    os << "<h3>" << e(model) << "</h3>\n"
       << figure(svg::render(chart),
                 "Mean of each stage per successful request, one bar per arm, cache phase and concurrency (×N: N "
                 "repeats pooled, weighted by request count); the number at the end of a bar is the mean end-to-end "
                 "latency. Measured: preprocessing (load, decode, resample, normalise, key) and reference encode "
                 "(including waits on a merged or batched encode). Modelled (hatched): synthesis to the last audio "
                 "frame, from the manifest's engine model. Queueing = mean E2E minus the three stages.");
  }
  os << "</section>\n";
  return os.str();
}

std::string throughput_section(const json& report, const std::map<GroupKey, Group>& groups,
                               const HtmlReportOptions& o) {
  std::ostringstream os;
  os << "<section id=\"throughput\"><h2>Throughput per cell</h2>\n";
  std::set<std::string> methods;
  for (const std::string& model : model_names(report)) {
    svg::IntervalChart chart{.x_label = "successful requests per second (req/s)"};
    chart.x_min = 0;
    for (const auto& [k, g] : groups) {
      if (g.model != model) continue;
      Throughput t = group_throughput(g, o);
      if (!t.method.empty()) methods.insert(t.method);
      chart.rows.push_back({.label = g.label(), .point = t.point, .lo = t.lo, .hi = t.hi, .has_interval = t.interval,
                            .colour = arm_colour(g.arm), .extra = g.cells.size() > 1 ? t.repeats : std::vector<double>{}});
    }
    if (chart.rows.empty()) continue;
    std::string how;
    if (methods.count("bootstrap"))
      how += fmt::format("Whiskers: {:.0f}% percentile-bootstrap interval ({} resamples over requests; a replicate "
                         "scales the observed throughput by mean E2E / resampled mean E2E, Little's law at fixed "
                         "concurrency). ",
                         100 * o.confidence, o.resamples);
    if (methods.count("repeats")) how += "Where requests.jsonl is absent, whiskers span the repeats (min to max). ";
    os << "<h3>" << e(model) << "</h3>\n"
       << figure(svg::render(chart),
                 "Measured: successful requests / cell wall time, repeats pooled (square); open circles: single "
                 "repeats. Blue M4a, vermillion M4b. " + how +
                     "The requests' latency includes modelled synthesis, so throughput is that of the modelled "
                     "service.");
  }
  // A warning every cell shares is said once, above the table.
  std::map<std::string, std::size_t> seen;
  for (const json& c : arr(report, "cells"))
    for (const json& w : arr(c, "warnings"))
      if (w.is_string()) ++seen[w.get<std::string>()];
  std::set<std::string> common;
  std::size_t n_cells = arr(report, "cells").size();
  for (const auto& [w, k] : seen)
    if (n_cells > 1 && k == n_cells) common.insert(w);
  os << "<h3>All cells</h3>\n";
  for (const auto& w : common) os << "<p class=\"warn\">Every cell: " << e(w) << "</p>\n";
  os << "<div class=\"tw\"><table><thead><tr><th>cell</th><th class=\"n\">requests</th><th "
        "class=\"n\">errors</th><th class=\"n\">wall s</th><th class=\"n\">req/s</th><th class=\"n\">audio s/s "
        "(modelled)</th><th class=\"n\">encode p50 / p95 ms</th><th class=\"n\">TTFA p95 ms</th><th "
        "class=\"n\">E2E p50 / p95 ms</th></tr></thead><tbody>\n";
  std::vector<std::pair<std::string, std::string>> cell_warnings;
  for (const json& c : arr(report, "cells")) {
    std::string id = str(c, "id");
    const json& st = sub(c, "stages");
    os << "<tr><td class=\"id\"><code>" << e(id) << "</code>" << (flag(c, "batching_active") ? " <small>(batching)</small>" : "")
       << (str(c, "arrivals") == "open" ? " <small>(open loop)</small>" : "") << "</td><td class=\"n\">"
       << e(str(c, "count")) << "</td><td class=\"n\">"
       << e(str(c, "errors")) << "</td><td class=\"n\">" << fixed(num(c, "wall_s"), 2)
       << "</td><td class=\"n\" data-key=\"tput." << e(id) << "\">" << fixed(num(c, "throughput_rps"), 2)
       << "</td><td class=\"n\">" << fixed(num(c, "audio_seconds_per_s"), 2) << "</td><td class=\"n\">"
       << ms(num(sub(st, "encode"), "p50")) << " / " << ms(num(sub(st, "encode"), "p95")) << "</td><td class=\"n\">"
       << ms(num(sub(st, "ttfa"), "p95")) << "</td><td class=\"n\" data-key=\"e2e." << e(id) << "\">"
       << ms(num(sub(st, "e2e"), "p50")) << " / " << ms(num(sub(st, "e2e"), "p95")) << "</td></tr>\n";
    for (const json& w : arr(c, "warnings")) {
      std::string text = w.is_string() ? w.get<std::string>() : w.dump();
      if (!common.count(text)) cell_warnings.emplace_back(id, text);
    }
  }
  os << "</tbody></table></div>\n";
  if (!cell_warnings.empty()) {
    os << "<p class=\"warn\">Warnings:</p><ul class=\"w\">";
    for (const auto& [id, text] : cell_warnings) os << "<li><code>" << e(id) << "</code>: " << e(text) << "</li>";
    os << "</ul>\n";
  }
  os << "</section>\n";
  return os.str();
}

std::string cache_section(const json& report) {
  std::ostringstream os;
  os << "<section id=\"cache\"><h2>Cache counters per phase</h2>\n";
  std::vector<std::string> counters{"hits", "disk_hits", "misses", "merged", "uncacheable", "failed", "evictions"};
  struct Row {
    std::string model, arm, phase;
    std::map<std::string, double> cache, outcomes;
    std::vector<double> batches;
    int cells = 0;
  };
  std::map<std::tuple<std::string, int, int>, Row> rows;
  for (const json& c : arr(report, "cells")) {
    std::string arm = str(c, "arm"), phase = str(c, "phase");
    Row& r = rows[{str(c, "model"), arm == "m4a" ? 0 : 1, phase_rank(phase)}];
    r.model = str(c, "model"), r.arm = arm, r.phase = phase;
    ++r.cells;
    for (auto it = sub(c, "cache").begin(); it != sub(c, "cache").end(); ++it)
      if (it.value().is_number()) r.cache[it.key()] += it.value().get<double>();
    for (auto it = sub(c, "outcomes").begin(); it != sub(c, "outcomes").end(); ++it)
      if (it.value().is_number()) r.outcomes[it.key()] += it.value().get<double>();
    const json& h = arr(c, "batch_size_histogram");
    if (r.batches.size() < h.size()) r.batches.resize(h.size());
    for (std::size_t i = 0; i < h.size(); ++i)
      if (h[i].is_number()) r.batches[i] += h[i].get<double>();
  }
  os << "<div class=\"tw\"><table><thead><tr><th>model</th><th>arm</th><th>phase</th><th class=\"n\">cells</th>";
  for (const auto& k : counters) os << "<th class=\"n\">" << e(k) << "</th>";
  os << "<th>other counters (non-zero)</th><th>request outcomes</th><th>encode batch sizes (size×count)</th></tr>"
        "</thead><tbody>\n";
  for (const auto& [k, r] : rows) {
    os << "<tr><td>" << e(r.model) << "</td><td>" << e(arm_label(r.arm)) << "</td><td>" << e(r.phase)
       << "</td><td class=\"n\">" << r.cells << "</td>";
    for (const auto& name : counters) {
      auto it = r.cache.find(name);
      os << "<td class=\"n\" data-key=\"cache." << e(r.model + "/" + r.arm + "/" + r.phase + "." + name) << "\">"
         << (it == r.cache.end() ? std::string("–") : fmt::format("{:.0f}", it->second)) << "</td>";
    }
    os << "<td>";
    bool first = true;
    for (const auto& [name, v] : r.cache) {
      if (v == 0 || std::find(counters.begin(), counters.end(), name) != counters.end()) continue;
      os << (first ? "" : ", ") << "<span data-key=\"cache." << e(r.model + "/" + r.arm + "/" + r.phase + "." + name)
         << "\">" << e(name) << " " << fmt::format("{:.0f}", v) << "</span>";
      first = false;
    }
    os << (first ? "–" : "") << "</td><td>";
    first = true;
    for (const auto& [name, v] : r.outcomes) {
      os << (first ? "" : ", ") << e(name) << " " << fmt::format("{:.0f}", v);
      first = false;
    }
    os << "</td><td>";
    first = true;
    for (std::size_t i = 0; i < r.batches.size(); ++i) {
      if (r.batches[i] <= 0) continue;
      os << (first ? "" : ", ") << (i + 1 == r.batches.size() && r.batches.size() >= 16 ? "≥" : "") << i + 1 << "×"
         << fmt::format("{:.0f}", r.batches[i]);
      first = false;
    }
    os << (first ? "–" : "") << "</td></tr>\n";
  }
  os << "</tbody></table></div>\n<p class=\"sub\">Measured: the encode service's counters, summed over the cells of each "
        "model, arm and cache phase (cold: empty cache; warm: in-memory tier primed; warm-disk: disk tier only). "
        "Outcomes count requests; batch sizes count encoder calls.</p>\n</section>\n";
  return os.str();
}

std::string utilisation_section(const json& report) {
  std::ostringstream os;
  os << "<section id=\"utilisation\"><h2>CPU and GPU utilisation over the run</h2>\n";
  svg::Series cpu_proc{.name = "refenc process (% of all cores), cell mean", .colour = svg::palette::blue, .step = true};
  svg::Series cpu_proc_max{.name = "refenc process, cell max", .colour = svg::palette::blue, .dash = "2 3", .step = true, .width = 1};
  svg::Series cpu_sys{.name = "whole system (% busy), cell mean", .colour = svg::palette::orange, .dash = "7 4", .step = true};
  svg::Series gpu{.name = "GPU 0 utilisation (%), cell mean", .colour = svg::palette::green, .step = true};
  svg::Series gpu_max{.name = "GPU 0 utilisation, cell max", .colour = svg::palette::green, .dash = "2 3", .step = true, .width = 1};
  double t = 0;
  bool any_cpu = false, any_gpu = false;
  std::string gpu_reason, gpu_name, cpu_reason;
  double gpu_mem_max = 0, gpu_mem_total = 0;
  auto push = [](svg::Series& s, double t0, double t1, double v) {
    s.points.push_back({t0, v});
    s.points.push_back({t1, v});
  };
  for (const json& c : arr(report, "cells")) {
    double w = num(c, "wall_s"), t1 = t + w;
    const json& cpu = sub(sub(c, "telemetry"), "cpu");
    const json& g = sub(sub(c, "telemetry"), "gpu");
    if (flag(cpu, "available")) {
      double cores = num(cpu, "cores", num(sub(report, "context"), "cores", 1));
      if (cores <= 0) cores = 1;
      push(cpu_proc, t, t1, 100 * num(cpu, "process_cores_mean") / cores);
      push(cpu_proc_max, t, t1, 100 * num(cpu, "process_cores_max") / cores);
      push(cpu_sys, t, t1, 100 * num(cpu, "system_util_mean"));
      any_cpu = true;
    } else if (cpu_reason.empty()) {
      cpu_reason = str(cpu, "reason", "not sampled");
    }
    if (flag(g, "available")) {
      push(gpu, t, t1, num(g, "util_percent_mean"));
      push(gpu_max, t, t1, num(g, "util_percent_max"));
      gpu_name = str(g, "name");
      gpu_mem_max = std::max(gpu_mem_max, num(g, "memory_used_max_mib"));
      gpu_mem_total = std::max(gpu_mem_total, num(g, "memory_total_mib"));
      any_gpu = true;
    } else if (gpu_reason.empty()) {
      gpu_reason = str(g, "reason", "not sampled");
    }
    t = t1;
  }
  const char* how =
      "The report keeps one mean and one maximum per cell (sampled every 250 ms while the cell ran), not the "
      "individual samples: each step is one cell, cells in run order, on a time axis that adds up the cells' wall "
      "times (pauses between cells are left out). Measured.";
  os << "<p class=\"note\">" << how << "</p>\n<div class=\"grid\">\n";
  if (any_cpu) {
    svg::LineChart chart{.title = "CPU", .x_label = "time into the run, cells back to back (s)",
                         .y_label = "utilisation (%)", .series = {cpu_proc, cpu_proc_max, cpu_sys}};
    chart.y_min = 0, chart.x_min = 0;
    os << figure(svg::render(chart), "Measured: CPU use of the refenc process, as a percentage of all cores, and of "
                                     "the whole system, per cell (means solid/dashed, process maximum dotted).");
  } else {
    os << "<p class=\"note\">No CPU samples: " << e(cpu_reason.empty() ? "the report has no cells" : cpu_reason) << ".</p>\n";
  }
  if (any_gpu) {
    svg::LineChart chart{.title = "GPU" + (gpu_name.empty() ? std::string() : ": " + gpu_name),
                         .x_label = "time into the run, cells back to back (s)", .y_label = "utilisation (%)",
                         .series = {gpu, gpu_max}};
    chart.y_min = 0, chart.x_min = 0, chart.y_max = 100;
    os << figure(svg::render(chart),
                 fmt::format("Measured: GPU 0 utilisation from NVML per cell (mean solid, maximum dotted); peak memory used "
                             "{:.0f} of {:.0f} MiB.",
                             gpu_mem_max, gpu_mem_total));
  } else {
    os << "<p class=\"note\">No GPU samples: " << e(gpu_reason.empty() ? "the report has no cells" : gpu_reason) << ".</p>\n";
  }
  os << "</div></section>\n";
  return os.str();
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out.emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
  }
}

std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::ostringstream os;
  os << "<table><tbody>\n";
  for (const auto& [k, v] : rows) os << "<tr><th>" << e(k) << "</th><td>" << e(v) << "</td></tr>\n";
  os << "</tbody></table>\n";
  return os.str();
}

std::string context_section(const json& report) {
  std::ostringstream os;
  os << "<section id=\"context\"><h2>Run context</h2>\n";
  std::vector<std::pair<std::string, std::string>> rows;
  flatten(sub(report, "context"), "", rows);
  rows.emplace_back("status", str(report, "status"));
  rows.emplace_back("wall time (s)", fixed(num(report, "wall_s"), 1));
  rows.emplace_back("percentile method", str(report, "percentile_method"));
  os << kv_table(rows);
  os << "<h3>Stages: measured or modelled</h3>\n";
  std::vector<std::pair<std::string, std::string>> kinds;
  flatten(sub(report, "stage_kinds"), "", kinds);
  os << kv_table(kinds);
  os << "<h3>Models</h3>\n<table><thead><tr><th>model</th><th>evidence grade</th><th>scale</th><th>real "
        "weights</th><th>rates</th><th>batching</th><th>eligible for M4b</th><th>encoder</th><th>synthesis "
        "source</th></tr></thead><tbody>\n";
  for (const json& m : arr(report, "models")) {
    std::vector<std::pair<std::string, std::string>> enc;
    flatten(sub(m, "encoder"), "", enc);
    std::string enc_text;
    for (const auto& [k, v] : enc) enc_text += (enc_text.empty() ? "" : ", ") + k + " " + v;
    const json& el = sub(m, "eligibility");
    os << "<tr><td>" << e(str(m, "name")) << "</td><td>" << e(str(m, "evidence_grade")) << "</td><td>"
       << e(str(m, "scale")) << "</td><td>" << (flag(m, "real_weights") ? "yes" : "no") << "</td><td>"
       << e(str(m, "sample_rate")) << " Hz, " << e(str(m, "frame_rate")) << " frames/s</td><td>"
       << (flag(m, "can_encode_batch") ? "batch primitive" : "no batch primitive")
       << (flag(m, "has_internal_batching") ? ", batches internally" : "") << "</td><td>"
       << (flag(el, "eligible") ? "yes" : "no") << ": " << e(str(el, "reason")) << "</td><td>" << e(enc_text)
       << "</td><td>" << e(str(sub(m, "synthesis"), "source")) << "</td></tr>\n";
  }
  os << "</tbody></table>\n";
  const json& man = sub(report, "manifest");
  os << "<h3>Manifest</h3>\n";
  std::vector<std::pair<std::string, std::string>> mrows{{"name", str(man, "name")},
                                                         {"path", str(man, "path")},
                                                         {"sha256", str(man, "sha256")},
                                                         {"seed", str(man, "seed")}};
  flatten(sub(man, "gate"), "gate", mrows);
  os << kv_table(mrows);
  if (man.contains("content"))
    os << "<details><summary>Full manifest</summary><pre>" << e(man["content"].dump(2)) << "</pre></details>\n";
  os << "</section>\n";
  return os.str();
}

std::string header(const json& report, const std::string& title) {
  const json& ctx = sub(report, "context");
  std::ostringstream os;
  os << "<header><h1>" << e(title) << "</h1>\n<p class=\"sub\">Run started " << e(str(ctx, "started_utc"))
     << " on " << e(str(ctx, "host")) << " (" << e(str(ctx, "cpu_model")) << ", " << e(str(ctx, "cores"))
     << " cores), git " << e(str(ctx, "git_revision")) << "; status <b data-key=\"status\">" << e(str(report, "status"))
     << "</b>; " << arr(report, "cells").size() << " cells in " << fixed(num(report, "wall_s"), 1) << " s.</p>\n";
  os << "<p class=\"note\">Preprocessing and reference encode are <b>measured</b>; synthesis is <b>modelled</b> (a "
        "continuous-batching engine simulated from the manifest's parameters); TTFA and E2E add both.</p>\n";
  os << "<nav><a href=\"#decision\">Decision</a><a href=\"#latency\">Latency</a><a href=\"#stages\">Stages</a>"
        "<a href=\"#throughput\">Throughput</a><a href=\"#cache\">Cache</a><a href=\"#utilisation\">Utilisation</a>"
        "<a href=\"#context\">Context</a></nav></header>\n";
  return os.str();
}

std::string default_title(const json& report, const HtmlReportOptions& o) {
  return o.title.empty() ? "refenc profile: " + str(sub(report, "manifest"), "name", "run") : o.title;
}

}  // namespace

RequestRows read_request_rows(const std::string& jsonl_path) {
  std::ifstream in(jsonl_path);
  if (!in) throw Error(ErrorKind::io, jsonl_path + ": cannot open the run's requests");
  RequestRows rows;
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& ex) {
      throw Error(ErrorKind::bad_input, fmt::format("{}: line {}: not valid JSON: {}", jsonl_path, n, ex.what()));
    }
    if (!j.is_object() || !j.contains("cell") || !j["cell"].is_string())
      throw Error(ErrorKind::bad_input, fmt::format("{}: line {}: no \"cell\" string", jsonl_path, n));
    rows[j["cell"].get<std::string>()].push_back(std::move(j));
  }
  return rows;
}

std::string render_html_report(const json& report, const RequestRows* requests, const HtmlReportOptions& options) {
  if (!report.is_object()) throw Error(ErrorKind::bad_input, "report: not a JSON object");
  bool have_requests = requests && !requests->empty();
  auto groups = group_cells(report, have_requests ? requests : nullptr);
  std::string title = default_title(report, options);
  std::string body = header(report, title) + decision_section(report) + latency_section(report, groups, have_requests) +
                     stages_section(report, groups) + throughput_section(report, groups, options) +
                     cache_section(report) + utilisation_section(report) + context_section(report) +
                     "<footer>Written by refenc from report.json (schema " + e(str(report, "schema")) + " v" +
                     e(str(report, "schema_version")) +
                     "). Self-contained: no script, no network. Colours: Okabe-Ito palette.</footer>\n";
  return page(title, body);
}

std::string write_html_report(const std::string& run_dir, const std::string& out, const HtmlReportOptions& options) {
  namespace fs = std::filesystem;
  fs::path p(run_dir);
  if (!fs::exists(p)) throw Error(ErrorKind::bad_input, run_dir + ": no such run folder or report.json");
  fs::path report_path = fs::is_directory(p) ? p / "report.json" : p;
  std::ifstream in(report_path);
  if (!in) throw Error(ErrorKind::bad_input, report_path.string() + ": cannot open report");
  json report;
  try {
    report = json::parse(in);
  } catch (const json::parse_error& ex) {
    throw Error(ErrorKind::bad_input, report_path.string() + ": not valid JSON: " + ex.what());
  }
  if (!report.is_object() || str(report, "schema") != "refenc-profile-report")
    throw Error(ErrorKind::bad_input, report_path.string() + ": not a refenc profile report (schema field)");
  fs::path req = report_path.parent_path() / "requests.jsonl";
  RequestRows rows;
  if (fs::exists(req)) rows = read_request_rows(req.string());
  std::string target = out.empty() ? (report_path.parent_path() / "report.html").string() : out;
  write_file_atomic(target, render_html_report(report, &rows, options));
  return target;
}

// ---------------------------------------------------------------------------------------------------
// Comparison page.

std::string render_compare_html(const json& baseline, const json& current, const json& comparison,
                                const HtmlReportOptions& options) {
  if (!baseline.is_object()) throw Error(ErrorKind::bad_input, "baseline report: not a JSON object");
  if (!current.is_object()) throw Error(ErrorKind::bad_input, "current report: not a JSON object");
  if (!comparison.is_object()) throw Error(ErrorKind::bad_input, "comparison: not a compare result object");
  double threshold = num(comparison, "threshold", 0.10);
  int regressions = static_cast<int>(num(comparison, "regressions"));
  std::string title = options.title.empty() ? "refenc compare: " + str(sub(current, "manifest"), "name", "run") : options.title;
  std::ostringstream os;
  auto who = [](const json& r, const std::string& dir) {
    const json& c = sub(r, "context");
    return "<code>" + e(dir) + "</code>: started " + e(str(c, "started_utc")) + " on " + e(str(c, "host")) + ", git " +
           e(str(c, "git_revision")) + ", manifest " + e(str(sub(r, "manifest"), "name")) + " (sha256 " +
           e(str(sub(r, "manifest"), "sha256").substr(0, 12)) + "…)";
  };
  os << "<header><h1>" << e(title) << "</h1>\n<p class=\"sub\">Baseline " << who(baseline, str(comparison, "baseline"))
     << "<br>Current " << who(current, str(comparison, "current")) << "</p>\n";
  os << "<p class=\"" << (regressions > 0 ? "bad" : "note") << "\"><b data-key=\"regressions\">" << regressions
     << "</b> of <b data-key=\"matched\">" << e(str(comparison, "matched", "0")) << "</b> matched cells regressed "
     << "beyond " << pct(threshold) << " (p95 E2E or p95 encode slower, or throughput lower, with a 95% interval "
     << "that excludes no change).</p>\n";
  if (str(sub(baseline, "manifest"), "sha256") != str(sub(current, "manifest"), "sha256"))
    os << "<p class=\"warn\">The two runs used different manifests: changes may come from the workload, not the "
          "code.</p>\n";
  os << "<nav><a href=\"#verdicts\">Verdicts</a><a href=\"#changes\">Changes</a><a href=\"#table\">Table</a></nav></header>\n";

  os << "<section id=\"verdicts\"><h2>Gate verdicts</h2>\n<table><thead><tr><th>model</th><th>baseline</th><th>current"
        "</th><th>current reason</th></tr></thead><tbody>\n";
  std::map<std::string, std::string> base_v;
  for (const json& m : arr(sub(baseline, "gate"), "models")) base_v[str(m, "model")] = str(m, "verdict", "?");
  for (const json& m : arr(sub(current, "gate"), "models")) {
    std::string model = str(m, "model"), cur = str(m, "verdict", "?");
    auto it = base_v.find(model);
    bool changed = it != base_v.end() && it->second != cur;
    os << "<tr" << (changed ? " class=\"regression\"" : "") << "><td>" << e(model) << "</td><td>"
       << (it == base_v.end() ? std::string("–") : verdict_badge(it->second)) << "</td><td>" << verdict_badge(cur, model)
       << (changed ? " <span class=\"flag\">changed</span>" : "") << "</td><td>" << e(str(m, "reason")) << "</td></tr>\n";
  }
  os << "</tbody></table></section>\n";

  struct MetricInfo {
    const char* key;
    const char* title;
    bool higher_is_worse;
  };
  const MetricInfo metrics[] = {{"p95_e2e", "p95 end-to-end latency (measured + modelled synthesis)", true},
                                {"p95_encode", "p95 reference encode (measured)", true},
                                {"p50_preprocessing", "p50 preprocessing (measured; informational, never a regression)", true},
                                {"throughput", "throughput (successful req/s)", false}};
  os << "<section id=\"changes\"><h2>Changes per cell</h2>\n<div>\n";
  for (const MetricInfo& mi : metrics) {
    svg::IntervalChart chart{.x_label = "change, current / baseline − 1 (%)"};
    for (const json& c : arr(comparison, "cells")) {
      const json& m = sub(sub(c, "metrics"), mi.key);
      if (m.empty()) continue;
      const json& ch = sub(m, "change");
      bool reg = flag(m, "regression");
      chart.rows.push_back({.label = str(c, "cell") + (reg ? "  REGRESSION" : ""), .point = 100 * num(ch, "point"),
                            .lo = 100 * num(ch, "lo"), .hi = 100 * num(ch, "hi"),
                            .colour = reg ? svg::palette::vermillion : svg::palette::blue, .highlight = reg});
    }
    if (chart.rows.empty()) continue;
    double t = 100 * threshold * (mi.higher_is_worse ? 1 : -1);
    chart.lines = {{.value = 0, .label = "no change", .colour = svg::palette::grey, .dash = "1 0"},
                   {.value = t, .label = fmt::format("regression threshold {:+.0f}%", t), .colour = svg::palette::vermillion}};
    os << figure("<h3>" + e(mi.title) + "</h3>" + svg::render(chart),
                 fmt::format("Relative change of the {} per matched cell (model/arm/phase/concurrency, repeats pooled): "
                             "square = point, whiskers = 95% percentile-bootstrap interval over requests. {} Highlighted "
                             "rows are regressions: beyond the dashed threshold with an interval excluding zero.",
                             e(mi.title), mi.higher_is_worse ? "Right = slower." : "Left = fewer requests per second."));
  }
  os << "</div></section>\n";

  os << "<section id=\"table\"><h2>All compared metrics</h2>\n<table><thead><tr><th>cell</th><th>metric</th><th "
        "class=\"n\">baseline</th><th class=\"n\">current</th><th class=\"n\">change [95% CI]</th><th></th></tr>"
        "</thead><tbody>\n";
  for (const json& c : arr(comparison, "cells")) {
    const json& ms_ = sub(c, "metrics");
    for (auto it = ms_.begin(); it != ms_.end(); ++it) {
      const json& m = it.value();
      bool tput = it.key() == "throughput", reg = flag(m, "regression");
      double scale = tput ? 1.0 : 1000.0;
      os << "<tr" << (reg ? " class=\"regression\"" : "") << "><td><code>" << e(str(c, "cell")) << "</code></td><td>"
         << e(it.key()) << (tput ? " (req/s)" : " (ms)") << "</td><td class=\"n\">" << fixed(scale * num(m, "baseline"), 2)
         << "</td><td class=\"n\">" << fixed(scale * num(m, "current"), 2) << "</td><td class=\"n\" data-key=\"change."
         << e(str(c, "cell")) << "." << e(it.key()) << "\">" << interval_text(sub(m, "change")) << "</td><td>"
         << (reg ? "<span class=\"flag\">REGRESSION</span>" : "") << "</td></tr>\n";
    }
  }
  os << "</tbody></table>\n";
  const json& unmatched = arr(comparison, "unmatched");
  if (!unmatched.empty()) {
    os << "<p class=\"warn\">Cells in one run only (not compared):</p><ul>";
    for (const json& u : unmatched) os << "<li><code>" << e(u.is_string() ? u.get<std::string>() : u.dump()) << "</code></li>";
    os << "</ul>\n";
  }
  os << "<p class=\"sub\">Method: " << e(str(comparison, "method")) << ".</p></section>\n";
  os << "<footer>Written by refenc compare. Self-contained: no script, no network. Colours: Okabe-Ito palette.</footer>\n";
  return page(title, os.str());
}

}  // namespace refenc::profile
