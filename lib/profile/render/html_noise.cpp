// The run page's noise section: A/A twins and their spread per metric, each cell's host load from /proc
// with contamination and re-runs, and where the stopping rule ended each group.
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"

namespace refenc::profile::html {

std::string noise_section(const RunRecord& run) {
  if (!run.noise) return "";
  const NoiseSettings& n = *run.noise;
  std::ostringstream os;
  os << "<section id=\"noise\"><h2>Noise: A/A twins, machine load, repeats</h2>\n";
  std::string arms;
  for (Arm a : n.aa_arms) arms += (arms.empty() ? "" : ", ") + arm_label(a);
  const ContaminationSpec& c = n.contamination;
  os << "<p class=\"sub\">A/A twins (the same arm run again right after the arms of each cell): <b>"
     << e(arms.empty() ? "none" : arms) << "</b>, <b data-key=\"aa.cells\">" << run.aa_cells.size()
     << "</b> cells. A cell is <b>contaminated</b> when, over its timed window (/proc), other processes used more "
        "than "
     << fixed(c.max_other_cores, 2) << " cores or CPU steal exceeded " << pct(c.max_steal_share)
     << (c.max_load_per_core > 0 ? " or the load average exceeded " + fixed(c.max_load_per_core, 2) + " per core" : "")
     << "; it is re-run up to " << c.max_reruns << " times and, if still contaminated, decides no verdict"
     << (c.enabled ? "" : " (judging is off in this run)") << ".</p>\n";
  if (!n.aa_spread.empty()) {
    os << "<table><thead><tr><th>group</th><th>metric</th><th class=\"n\">pairs</th><th class=\"n\">A/A spread "
          "(largest |twin / cell − 1|)</th></tr></thead><tbody>\n";
    for (const AaSpread& a : n.aa_spread)
      os << "<tr><td><code>" << e(a.group.label()) << "</code></td><td>" << e(a.metric) << "</td><td class=\"n\">"
         << a.differences.size() << "</td><td class=\"n\" data-key=\"aa." << e(a.group.label()) << "." << e(a.metric)
         << "\">" << pct(a.spread) << "</td></tr>\n";
    os << "</tbody></table>\n";
  }
  os << "<table><thead><tr><th>cell</th><th class=\"n\">other processes (cores)</th><th class=\"n\">steal</th>"
        "<th class=\"n\">own (cores)</th><th class=\"n\">load 1 min</th><th class=\"n\">attempts</th><th>state</th>"
        "</tr></thead><tbody>\n";
  bool any = false;
  for (const auto* cells : {&run.cells, &run.aa_cells})
    for (const Cell& cell : *cells) {
      if (!cell.host_load) continue;
      any = true;
      const HostLoad& h = *cell.host_load;
      std::string id = cell.key.id() + (cell.aa ? "/aa" : "");
      os << "<tr" << (cell.contaminated ? " class=\"regression\"" : "") << "><td><code>" << e(id) << "</code></td>";
      if (h.available)
        os << "<td class=\"n\">" << fixed(h.other_cores(), 2) << "</td><td class=\"n\">" << pct(h.steal_share)
           << "</td><td class=\"n\">" << fixed(h.own_cpu_share * h.cores, 2) << "</td><td class=\"n\">"
           << fixed(h.load1_start, 2) << " → " << fixed(h.load1_end, 2) << "</td>";
      else
        os << "<td colspan=\"4\">" << e(h.reason) << "</td>";
      os << "<td class=\"n\">" << cell.discarded.size() + 1 << "</td><td data-key=\"contaminated." << e(id) << "\">"
         << (cell.contaminated ? "<span class=\"flag\">contaminated</span>" : "clean") << "</td></tr>\n";
    }
  os << "</tbody></table>\n";
  if (!any) os << "<p class=\"note\">No host load was recorded in this run.</p>\n";
  bool stops = false;
  for (const StopRecord& s : n.stops) {
    if (s.reason == "repeats") continue;
    if (!stops) os << "<h3>Stopping rule</h3><ul>";
    stops = true;
    os << "<li>" << e(s.model) << "/" << e(to_string(s.phase)) << "/c" << s.concurrency << ": " << s.repeats
       << " repeats, " << e(s.reason)
       << fmt::format(" (interval widths: p95 reduction {:.1f}, throughput gain {:.1f} points)", 100 * s.p95_width,
                      100 * s.throughput_width)
       << "</li>";
  }
  if (stops) os << "</ul>\n";
  os << "</section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
