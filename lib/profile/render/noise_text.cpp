#include "profile/render/noise_text.hpp"

#include <sstream>

#include <fmt/format.h>

namespace refenc::profile {
namespace {

std::string percent(double share) { return share < 0 ? "n/a" : fmt::format("{:.0f}%", 100 * share); }

std::string host_text(const HostLoad& h) {
  if (!h.available) return "host load unavailable: " + h.reason;
  return fmt::format("other processes {:.2f} cores, steal {:.1f}%, own {:.2f} cores, load {:.2f} -> {:.2f}",
                     h.other_cores(), 100 * h.steal_share, h.own_cpu_share * h.cores, h.load1_start, h.load1_end);
}

}  // namespace

std::vector<std::string> verdict_noise_lines(const ModelVerdict& m) {
  std::vector<std::string> out;
  if (!m.contaminated.empty()) {
    std::string line = "contaminated (decides nothing): ";
    for (std::size_t i = 0; i < m.contaminated.size(); ++i) line += (i ? "; " : "") + m.contaminated[i];
    out.push_back(line);
  }
  if (m.stability) {
    const VerdictStability& s = *m.stability;
    std::string levels;
    for (const LevelResult& l : m.levels)
      if (l.bootstrap_go_share >= 0)
        levels += fmt::format("{}c{} {}, GO in {}", levels.empty() ? "" : "; ", l.concurrency, to_string(l.outcome),
                              percent(l.bootstrap_go_share));
    std::string repeats;
    for (Verdict v : s.repeat_verdicts) repeats += (repeats.empty() ? "" : " ") + std::string(to_string(v));
    out.push_back(fmt::format(
        "stability: {} of bootstrap replicates give each level's verdict ({}); {} of {} repeats alone give {} [{}]",
        percent(s.bootstrap_agreement), levels.empty() ? "no replicates" : levels, s.repeats_agreeing, s.repeats,
        to_string(m.verdict), repeats));
  }
  return out;
}

std::string noise_markdown(const RunRecord& run) {
  if (!run.noise) return "";
  const NoiseSettings& n = *run.noise;
  std::ostringstream os;
  os << "\n## Noise\n\n";
  std::string arms;
  for (Arm a : n.aa_arms) arms += (arms.empty() ? "" : ", ") + std::string(to_string(a));
  os << "- A/A twins: " << (arms.empty() ? "none" : arms) << " (" << run.aa_cells.size() << " cells)\n";
  const ContaminationSpec& c = n.contamination;
  os << fmt::format(
      "- contamination: {}; a cell is contaminated when other processes use more than {:.2f} cores, steal "
      "exceeds {:.0f}%{}; re-run up to {} times\n",
      c.enabled ? "judged" : "recorded only", c.max_other_cores, 100 * c.max_steal_share,
      c.max_load_per_core > 0 ? fmt::format(" or the load average exceeds {:.2f} per core", c.max_load_per_core) : "",
      c.max_reruns);
  if (n.stopping.max_repeats > 0 && n.stopping.target_width > 0)
    os << fmt::format(
        "- stopping rule: repeat cold cells until both gate intervals are at most {:.1f} points wide, "
        "at most {} repeats\n",
        100 * n.stopping.target_width, n.stopping.max_repeats);
  if (!n.aa_spread.empty()) {
    os << "\nA/A spread (|twin / cell - 1| per pair; the largest):\n\n| group | metric | pairs | spread "
          "|\n|---|---|---:|---:|\n";
    for (const AaSpread& a : n.aa_spread)
      os << fmt::format("| {} | {} | {} | {:.1f}% |\n", a.group.label(), a.metric, a.differences.size(),
                        100 * a.spread);
  }
  bool header = false;
  for (const auto* cells : {&run.cells, &run.aa_cells})
    for (const Cell& cell : *cells) {
      if (!cell.contaminated && cell.discarded.empty()) continue;
      if (!header) os << "\nCells re-run or contaminated (host load from /proc):\n\n";
      header = true;
      os << "- " << cell.key.id() << (cell.aa ? " (A/A)" : "") << ": "
         << (cell.contaminated ? "contaminated" : "clean on attempt " + std::to_string(cell.discarded.size() + 1))
         << (cell.host_load ? "; " + host_text(*cell.host_load) : "") << "; " << cell.discarded.size()
         << " attempt(s) discarded\n";
    }
  bool stops = false;
  for (const StopRecord& s : n.stops) {
    if (s.reason == "repeats") continue;
    if (!stops) os << "\nStopping rule:\n\n";
    stops = true;
    os << fmt::format(
        "- {}/{}/c{}: {} repeats, {} (interval widths: p95 reduction {:.1f}, throughput gain {:.1f} points)\n", s.model,
        to_string(s.phase), s.concurrency, s.repeats, s.reason, 100 * s.p95_width, 100 * s.throughput_width);
  }
  return os.str();
}

std::string compare_runs_line(const CompareResult& r) {
  auto list = [](const std::vector<std::string>& dirs) {
    std::string out;
    for (const auto& d : dirs) out += (out.empty() ? "" : ", ") + d;
    return out;
  };
  const bool test = static_cast<int>(r.baseline_dirs.size()) >= r.min_runs_for_test &&
                    static_cast<int>(r.current_dirs.size()) >= r.min_runs_for_test;
  return fmt::format(
      "runs: baseline {} ({}), current {} ({}); a regression must exceed the threshold {:.0f}% (a latency by "
      "at least {:g} ms) and the metric's noise floor (column floor){}\n",
      r.baseline_dirs.size(), list(r.baseline_dirs), r.current_dirs.size(), list(r.current_dirs), 100 * r.threshold,
      1000 * r.min_change_s,
      test ? fmt::format(", and pass a one-sided Mann-Whitney U test over per-run figures at p <= {}", r.alpha)
           : fmt::format("; U test not applied (needs {} runs each side)", r.min_runs_for_test));
}

}  // namespace refenc::profile
