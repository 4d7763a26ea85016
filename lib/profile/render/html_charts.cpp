// The run page's charts: latency CDFs of M4a against M4b, the stage breakdown and throughput per group.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"
#include "profile/stats/throughput.hpp"

namespace refenc::profile::html {
namespace {

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

struct Throughput {
  Interval value;
  bool interval = false;
  std::string method;  // "bootstrap", "repeats" or "" (none)
  std::vector<double> repeats;
};

Throughput group_throughput(const CellGroup& g, const BootstrapOptions& bootstrap) {
  Throughput t;
  double done = 0, wall = 0;
  for (const Cell* c : g.cells) {
    done += c->throughput_rps * c->wall_s;
    wall += c->wall_s;
    t.repeats.push_back(c->throughput_rps);
  }
  t.value.point = wall > 0 ? done / wall : (t.repeats.empty() ? 0 : t.repeats.front());
  ThroughputPool pool = g.throughput_pool();
  if (pool.e2e.size() >= 2 && bootstrap.resamples > 0) {
    BootstrapOptions o = bootstrap;
    o.seed ^= stable_hash(g.key.label());
    t.value = throughput_interval(pool, o);
    t.interval = true, t.method = "bootstrap";
  } else if (t.repeats.size() >= 2) {
    auto [lo, hi] = std::minmax_element(t.repeats.begin(), t.repeats.end());
    t.value.lo = *lo, t.value.hi = *hi, t.interval = true, t.method = "repeats";
  }
  return t;
}

}  // namespace

std::string latency_section(const RunRecord& run, const std::vector<const CellGroup*>& groups) {
  std::ostringstream os;
  os << "<section id=\"latency\"><h2>End-to-end latency: M4a against M4b</h2>\n";
  if (!run.have_requests)
    os << "<p class=\"note\">requests.jsonl was not found beside report.json: the curves below join the report's "
          "percentiles (p50, p90, p95, p99, max) and are not the full distributions.</p>\n";
  os << "<div class=\"grid\">\n";
  std::map<std::pair<std::string, int>, std::vector<const CellGroup*>> panels;
  std::vector<std::pair<std::string, int>> order;
  for (const CellGroup* g : groups) {
    auto key = std::make_pair(g->key.model, g->key.concurrency);
    if (!panels.count(key)) order.push_back(key);
    panels[key].push_back(g);
  }
  for (const auto& key : order) {
    svg::LineChart chart{.title = fmt::format("{}, concurrency {}", key.first, key.second),
                         .x_label = "end-to-end latency (ms)",
                         .y_label = "fraction of requests ≤ latency"};
    chart.y_min = 0, chart.y_max = 1, chart.x_min = 0;
    bool from_requests = true;
    std::size_t n_requests = 0;
    for (const CellGroup* g : panels[key]) {
      svg::Series s{.name = arm_label(g->key.arm) + " " + std::string(to_string(g->key.phase)),
                    .colour = arm_colour(g->key.arm),
                    .dash = phase_dash(g->key.phase)};
      std::vector<double> e2e = run.have_requests ? g->samples(Stage::e2e) : std::vector<double>{};
      std::sort(e2e.begin(), e2e.end());
      if (!e2e.empty()) {
        s.points = cdf_points(e2e);
        s.step = true;
        n_requests += e2e.size();
      } else {
        from_requests = false;
        double k = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
        for (const Cell* c : g->cells) {
          const Summary& st = c->stage(Stage::e2e);
          if (st.count == 0) continue;
          ++k;
          p50 += st.p50, p90 += st.p90, p95 += st.p95, p99 += st.p99, max += st.max;
        }
        if (k == 0) continue;
        s.points = {{1000 * p50 / k, 0.5},
                    {1000 * p90 / k, 0.9},
                    {1000 * p95 / k, 0.95},
                    {1000 * p99 / k, 0.99},
                    {1000 * max / k, 1.0}};
        s.markers = true;
        s.name += k > 1 ? fmt::format(" (mean of {} repeats' percentiles)", k) : " (percentiles)";
      }
      chart.series.push_back(std::move(s));
    }
    std::string caption =
        "Measured plus modelled: E2E = queueing + preprocessing + reference encode (measured) + synthesis "
        "(modelled). Colour: arm (blue M4a, vermillion M4b); line style: cache phase (solid cold, dashed warm, "
        "dotted warm-disk, dash-dot warm-shared). ";
    caption += from_requests ? fmt::format("Empirical CDF of {} successful requests, repeats pooled.", n_requests)
                             : "Drawn from the report's percentiles (p50, p90, p95, p99, max; nearest rank): "
                               "requests.jsonl was not available, so points are joined by straight lines.";
    os << figure(svg::render(chart), caption);
  }
  os << "</div></section>\n";
  return os.str();
}

std::string stages_section(const RunRecord& run, const std::vector<const CellGroup*>& groups) {
  std::ostringstream os;
  os << "<section id=\"stages\"><h2>Where the time goes: stage breakdown per cell</h2>\n";
  for (const std::string& model : model_names(run)) {
    svg::StackedBarChart chart{.x_label = "mean time per successful request (ms)"};
    chart.segments = {{"queueing", svg::palette::grey},
                      {"preprocessing", svg::palette::sky_blue},
                      {"reference encode", svg::palette::orange},
                      {"synthesis", svg::palette::green, true}};
    for (const CellGroup* g : groups) {
      if (g->key.model != model) continue;
      double n = 0, pre = 0, enc = 0, syn = 0, e2e = 0;
      for (const Cell* c : g->cells) {
        double cn = static_cast<double>(c->stage(Stage::e2e).count);
        n += cn;
        pre += cn * c->stage(Stage::preprocessing).mean;
        enc += cn * c->stage(Stage::encode).mean;
        syn += cn * c->stage(Stage::synthesis_end).mean;
        e2e += cn * c->stage(Stage::e2e).mean;
      }
      if (n <= 0) continue;
      pre /= n, enc /= n, syn /= n, e2e /= n;
      double queue = std::max(0.0, e2e - pre - enc - syn);
      chart.rows.push_back(group_label(g->key) + (g->cells.size() > 1 ? fmt::format(" ×{}", g->cells.size()) : ""));
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

std::string throughput_section(const RunRecord& run, const std::vector<const CellGroup*>& groups,
                               const BootstrapOptions& bootstrap) {
  std::ostringstream os;
  os << "<section id=\"throughput\"><h2>Throughput per cell</h2>\n";
  std::set<std::string> methods;
  for (const std::string& model : model_names(run)) {
    svg::IntervalChart chart{.x_label = "successful requests per second (req/s)"};
    chart.x_min = 0;
    std::string values = "<details><summary>Values</summary><table><tbody>\n";
    for (const CellGroup* g : groups) {
      if (g->key.model != model) continue;
      Throughput t = group_throughput(*g, bootstrap);
      if (!t.method.empty()) methods.insert(t.method);
      chart.rows.push_back({.label = group_label(g->key),
                            .point = t.value.point,
                            .lo = t.value.lo,
                            .hi = t.value.hi,
                            .has_interval = t.interval,
                            .colour = arm_colour(g->key.arm),
                            .extra = g->cells.size() > 1 ? t.repeats : std::vector<double>{}});
      values += "<tr><td>" + e(group_label(g->key)) + "</td><td class=\"n\" data-key=\"tput-ci." + e(g->key.label()) +
                "\">" + fmt::format("{:.2f}", t.value.point) +
                (t.interval ? fmt::format(" [{:.2f}, {:.2f}]", t.value.lo, t.value.hi) : std::string()) +
                "</td></tr>\n";
    }
    values += "</tbody></table></details>\n";
    if (chart.rows.empty()) continue;
    std::string how;
    if (methods.count("bootstrap"))
      how += fmt::format(
          "Whiskers: {:.0f}% percentile-bootstrap interval ({} resamples over requests; a replicate "
          "scales the observed throughput by mean E2E / resampled mean E2E, Little's law at fixed "
          "concurrency: the gate's construction). ",
          100 * bootstrap.confidence, bootstrap.resamples);
    if (methods.count("repeats")) how += "Where requests.jsonl is absent, whiskers span the repeats (min to max). ";
    os << "<h3>" << e(model) << "</h3>\n"
       << figure(svg::render(chart),
                 "Measured: successful requests / cell wall time, repeats pooled (square); open circles: single "
                 "repeats. Blue M4a, vermillion M4b. " +
                     how +
                     "The requests' latency includes modelled synthesis, so throughput is that of the modelled "
                     "service.")
       << values;
  }
  os << cells_table(run) << "</section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
