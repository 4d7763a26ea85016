// The run page's tables of counts: every cell's figures, cache counters per phase, CPU/GPU use.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"

namespace refenc::profile::html {
namespace {

/// The compute a cell's encodes got, e.g. "2 encodes (2 batch workers), 1 intra-op".
std::string compute_cell(const Cell& c) {
  if (!c.compute) return "";
  const ArmCompute& a = *c.compute;
  return fmt::format("{} encodes{}, {} intra-op, {}", a.encode_threads,
                     a.batch_workers ? fmt::format(" ({} batch workers)", a.batch_workers) : "",
                     a.intra_op_threads ? std::to_string(a.intra_op_threads) : "?", a.device);
}

/// A cell's parity: "6/6 identical", "1 of 6 differ", or empty for M4a.
std::string parity_cell(const Cell& c) {
  if (!c.parity) return "";
  const ParitySummary& p = *c.parity;
  if (p.checked == 0) return p.batched ? fmt::format("0 of {} batched checked", p.batched) : "no batched requests";
  if (!p.holds()) return fmt::format("{} of {} differ from single encodes", p.mismatched + p.errors, p.checked);
  return fmt::format("{}/{} identical{}", p.identical, p.checked,
                     p.within_tolerance ? fmt::format(", {} within {:.3g}", p.within_tolerance, p.tolerance) : "");
}

}  // namespace

std::string cells_table(const RunRecord& run) {
  std::ostringstream os;
  // A warning every cell shares is said once, above the table.
  std::map<std::string, std::size_t> seen;
  for (const Cell& c : run.cells)
    for (const std::string& w : c.warnings) ++seen[w];
  std::set<std::string> common;
  for (const auto& [w, k] : seen)
    if (run.cells.size() > 1 && k == run.cells.size()) common.insert(w);
  os << "<h3>All cells</h3>\n";
  for (const auto& w : common) os << "<p class=\"warn\">Every cell: " << e(w) << "</p>\n";
  os << "<div class=\"tw\"><table><thead><tr><th>cell</th><th class=\"n\">requests</th><th "
        "class=\"n\">errors</th><th class=\"n\">wall s</th><th class=\"n\">req/s</th><th class=\"n\">audio s/s "
        "(modelled)</th><th class=\"n\">encode p50 / p95 ms</th><th class=\"n\">TTFA p95 ms</th><th "
        "class=\"n\">E2E p50 / p95 ms</th><th>compute</th><th>parity (M4b)</th></tr></thead><tbody>\n";
  std::vector<std::pair<std::string, std::string>> cell_warnings;
  for (const Cell& c : run.cells) {
    std::string id = c.key.id();
    os << "<tr><td class=\"id\"><code>" << e(id) << "</code>" << (c.batching_active ? " <small>(batching)</small>" : "")
       << (c.open_loop ? " <small>(open loop)</small>" : "") << "</td><td class=\"n\">" << c.count
       << "</td><td class=\"n\">" << c.errors << "</td><td class=\"n\">" << fixed(c.wall_s, 2)
       << "</td><td class=\"n\" data-key=\"tput." << e(id) << "\">" << fixed(c.throughput_rps, 2)
       << "</td><td class=\"n\">" << fixed(c.audio_seconds_per_s, 2) << "</td><td class=\"n\">"
       << ms(c.stage(Stage::encode).p50) << " / " << ms(c.stage(Stage::encode).p95) << "</td><td class=\"n\">"
       << ms(c.stage(Stage::ttfa).p95) << "</td><td class=\"n\" data-key=\"e2e." << e(id) << "\">"
       << ms(c.stage(Stage::e2e).p50) << " / " << ms(c.stage(Stage::e2e).p95) << "</td><td>" << e(compute_cell(c))
       << "</td><td" << (c.parity && !c.parity->holds() ? " class=\"bad\"" : "") << " data-key=\"parity." << e(id)
       << "\">" << e(parity_cell(c)) << "</td></tr>\n";
    for (const std::string& w : c.warnings)
      if (!common.count(w)) cell_warnings.emplace_back(id, w);
  }
  os << "</tbody></table></div>\n";
  if (!cell_warnings.empty()) {
    os << "<p class=\"warn\">Warnings:</p><ul class=\"w\">";
    for (const auto& [id, text] : cell_warnings) os << "<li><code>" << e(id) << "</code>: " << e(text) << "</li>";
    os << "</ul>\n";
  }
  return os.str();
}

std::string cache_section(const RunRecord& run) {
  std::ostringstream os;
  os << "<section id=\"cache\"><h2>Cache counters per phase</h2>\n";
  std::vector<std::string> counters{"hits", "disk_hits", "misses", "merged", "uncacheable", "failed", "evictions"};
  if (std::any_of(run.cells.begin(), run.cells.end(), [](const Cell& c) { return c.key.phase == Phase::warm_shared; }))
    counters.insert(counters.begin() + 2, "shared_hits");  // where a run has a shared tier
  struct Row {
    std::string model;
    Arm arm = Arm::m4a;
    Phase phase = Phase::cold;
    std::map<std::string, double> cache, outcomes;
    std::vector<double> batches;
    int cells = 0;
  };
  std::map<std::tuple<std::string, Arm, Phase>, Row> rows;
  for (const Cell& c : run.cells) {
    Row& r = rows[{c.key.model, c.key.arm, c.key.phase}];
    r.model = c.key.model, r.arm = c.key.arm, r.phase = c.key.phase;
    ++r.cells;
    for (const auto& [name, v] : c.cache) r.cache[name] += static_cast<double>(v);
    for (const auto& [name, v] : c.outcomes) r.outcomes[name] += static_cast<double>(v);
    const auto& h = c.batch_size_histogram;
    if (r.batches.size() < h.size()) r.batches.resize(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) r.batches[i] += static_cast<double>(h[i]);
  }
  os << "<div class=\"tw\"><table><thead><tr><th>model</th><th>arm</th><th>phase</th><th class=\"n\">cells</th>";
  for (const auto& k : counters) os << "<th class=\"n\">" << e(k) << "</th>";
  os << "<th>other counters (non-zero)</th><th>request outcomes</th><th>encode batch sizes (size×count)</th></tr>"
        "</thead><tbody>\n";
  for (const auto& [k, r] : rows) {
    std::string where = r.model + "/" + std::string(to_string(r.arm)) + "/" + std::string(to_string(r.phase)) + ".";
    os << "<tr><td>" << e(r.model) << "</td><td>" << e(arm_label(r.arm)) << "</td><td>" << e(to_string(r.phase))
       << "</td><td class=\"n\">" << r.cells << "</td>";
    for (const auto& name : counters) {
      auto it = r.cache.find(name);
      os << "<td class=\"n\" data-key=\"cache." << e(where + name) << "\">"
         << (it == r.cache.end() ? std::string("–") : fmt::format("{:.0f}", it->second)) << "</td>";
    }
    os << "<td>";
    bool first = true;
    for (const auto& [name, v] : r.cache) {
      if (v == 0 || std::find(counters.begin(), counters.end(), name) != counters.end()) continue;
      os << (first ? "" : ", ") << "<span data-key=\"cache." << e(where + name) << "\">" << e(name) << " "
         << fmt::format("{:.0f}", v) << "</span>";
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
  os << "</tbody></table></div>\n<p class=\"sub\">Measured: the encode service's counters, summed over the cells of "
        "each "
        "model, arm and cache phase (cold: empty cache; warm: in-memory tier primed; warm-disk: disk tier only; "
        "warm-shared: the tier shared by replicas only, filled by another service). "
        "Outcomes count requests; batch sizes count encoder calls.</p>\n</section>\n";
  return os.str();
}

namespace {

/// Per cell GPU power and energy with the energy per encode, and the GPU metrics that were unavailable;
/// empty when no cell read the GPU.
std::string gpu_energy_table(const RunRecord& run) {
  std::ostringstream rows;
  std::map<std::string, std::string> unavailable;  // metric -> first reason met
  for (const Cell& c : run.cells) {
    const GpuSummary& g = c.telemetry.gpu;
    if (!g.available) continue;
    for (const auto& [name, m] :
         {std::pair{"utilisation", &g.metrics.utilization}, std::pair{"memory", &g.metrics.memory},
          std::pair{"power", &g.metrics.power}, std::pair{"energy counter", &g.metrics.energy}})
      if (!m->unavailable.empty()) unavailable.emplace(name, m->unavailable);
    if (g.metrics.power.samples == 0 && g.energy_method.empty()) continue;
    bool power = g.metrics.power.samples > 0, energy = !g.energy_method.empty();
    rows << "<tr><td class=\"id\"><code>" << e(c.key.id()) << "</code></td><td class=\"n\">"
         << (power ? fixed(g.power_mean_w, 1) + " / " + fixed(g.power_max_w, 1) : "–") << "</td><td class=\"n\">"
         << (energy ? fixed(g.energy_j, 2) : "–") << "</td><td>" << (energy ? e(g.energy_method) : "–")
         << "</td><td class=\"n\">" << g.encodes << "</td><td class=\"n\">"
         << (energy && g.encodes > 0 ? fixed(g.energy_per_encode_j, 3) : "–") << "</td></tr>\n";
  }
  std::ostringstream os;
  if (!rows.str().empty())
    os << "<h3>GPU power and energy</h3>\n<div class=\"tw\"><table><thead><tr><th>cell</th><th class=\"n\">power "
          "mean / max W</th><th class=\"n\">energy J</th><th>method</th><th class=\"n\">encodes</th><th "
          "class=\"n\">J per encode</th></tr></thead><tbody>\n"
       << rows.str()
       << "</tbody></table></div>\n<p class=\"sub\">Measured: GPU 0 power from NVML; energy is the driver's energy "
          "counter over the cell (counter) or, where it is unavailable, power integrated over the sampling "
          "intervals (power_integrated). J per encode divides the device's whole energy over the cell, idle draw "
          "included, by the encodes the cell performed (misses − disk hits + uncacheable).</p>\n";
  for (const auto& [name, why] : unavailable) os << "<p class=\"note\">GPU " << name << ": " << e(why) << ".</p>\n";
  return os.str();
}

}  // namespace

std::string utilisation_section(const RunRecord& run) {
  std::ostringstream os;
  os << "<section id=\"utilisation\"><h2>CPU and GPU utilisation over the run</h2>\n";
  svg::Series cpu_proc{
      .name = "refenc process (% of all cores), cell mean", .colour = svg::palette::blue, .step = true};
  svg::Series cpu_proc_max{
      .name = "refenc process, cell max", .colour = svg::palette::blue, .dash = "2 3", .step = true, .width = 1};
  svg::Series cpu_sys{
      .name = "whole system (% busy), cell mean", .colour = svg::palette::orange, .dash = "7 4", .step = true};
  svg::Series gpu{.name = "GPU 0 utilisation (%), cell mean", .colour = svg::palette::green, .step = true};
  svg::Series gpu_max{
      .name = "GPU 0 utilisation, cell max", .colour = svg::palette::green, .dash = "2 3", .step = true, .width = 1};
  double t = 0;
  bool any_cpu = false, any_gpu = false;
  std::string gpu_reason, gpu_name, cpu_reason;
  double gpu_mem_max = 0, gpu_mem_total = 0;
  auto push = [](svg::Series& s, double t0, double t1, double v) {
    s.points.push_back({t0, v});
    s.points.push_back({t1, v});
  };
  for (const Cell& c : run.cells) {
    double t1 = t + c.wall_s;
    const CpuSummary& cpu = c.telemetry.cpu;
    const GpuSummary& g = c.telemetry.gpu;
    if (cpu.available) {
      double cores = cpu.cores > 0 ? cpu.cores : run.context.cores > 0 ? run.context.cores : 1;
      push(cpu_proc, t, t1, 100 * cpu.process_mean / cores);
      push(cpu_proc_max, t, t1, 100 * cpu.process_max / cores);
      push(cpu_sys, t, t1, 100 * cpu.system_mean);
      any_cpu = true;
    } else if (cpu_reason.empty()) {
      cpu_reason = cpu.reason.empty() ? "not sampled" : cpu.reason;
    }
    if (g.available && g.metrics.utilization.samples > 0) {
      push(gpu, t, t1, g.util_mean);
      push(gpu_max, t, t1, g.util_max);
      gpu_name = g.name;
      gpu_mem_max = std::max(gpu_mem_max, g.memory_used_max_mib);
      gpu_mem_total = std::max(gpu_mem_total, g.memory_total_mib);
      any_gpu = true;
    } else if (gpu_reason.empty()) {
      gpu_reason = g.available ? g.metrics.utilization.unavailable : g.reason;
      if (gpu_reason.empty()) gpu_reason = "not sampled";
    }
    t = t1;
  }
  const char* how =
      "The report keeps one mean and one maximum per cell (sampled every 250 ms while the cell ran), not the "
      "individual samples: each step is one cell, cells in run order, on a time axis that adds up the cells' wall "
      "times (pauses between cells are left out). Measured.";
  os << "<p class=\"note\">" << how << "</p>\n<div class=\"grid\">\n";
  if (any_cpu) {
    svg::LineChart chart{.title = "CPU",
                         .x_label = "time into the run, cells back to back (s)",
                         .y_label = "utilisation (%)",
                         .series = {cpu_proc, cpu_proc_max, cpu_sys}};
    chart.y_min = 0, chart.x_min = 0;
    os << figure(svg::render(chart),
                 "Measured: CPU use of the refenc process, as a percentage of all cores, and of "
                 "the whole system, per cell (means solid/dashed, process maximum dotted).");
  } else {
    os << "<p class=\"note\">No CPU samples: " << e(cpu_reason.empty() ? "the report has no cells" : cpu_reason)
       << ".</p>\n";
  }
  if (any_gpu) {
    svg::LineChart chart{.title = "GPU" + (gpu_name.empty() ? std::string() : ": " + gpu_name),
                         .x_label = "time into the run, cells back to back (s)",
                         .y_label = "utilisation (%)",
                         .series = {gpu, gpu_max}};
    chart.y_min = 0, chart.x_min = 0, chart.y_max = 100;
    os << figure(
        svg::render(chart),
        fmt::format("Measured: GPU 0 utilisation from NVML per cell (mean solid, maximum dotted); peak memory used "
                    "{:.0f} of {:.0f} MiB.",
                    gpu_mem_max, gpu_mem_total));
  } else {
    os << "<p class=\"note\">No GPU samples: " << e(gpu_reason.empty() ? "the report has no cells" : gpu_reason)
       << ".</p>\n";
  }
  os << "</div>\n" << gpu_energy_table(run) << "</section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
