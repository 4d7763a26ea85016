// refenc compare BASELINE CURRENT | --baseline RUN... --current RUN...: per-cell changes between profile
// runs, regressions flagged only beyond the threshold and the runs' noise floor.
#include <iostream>
#include <memory>

#include "command.hpp"
#include "core/error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/verdict/compare.hpp"
#include "util/atomic_file.hpp"

namespace {

struct CompareCommandOptions {
  std::string baseline, current;
  std::vector<std::string> baselines, currents;
  double threshold = 0.10;
  double alpha = 0.05;
  int min_runs = 3;
  double min_change_ms = 1.0;
  double floor_confidence = 0.99;
  bool judge_contaminated = false;
  bool json = false;
  std::string html;
};

int run_compare(const CompareCommandOptions& o) {
  using namespace refenc::profile;
  using refenc::Error, refenc::ErrorKind;
  if (!(o.threshold > 0)) throw Error(ErrorKind::bad_input, "--threshold: must be > 0");
  if (!(o.alpha > 0 && o.alpha < 1)) throw Error(ErrorKind::bad_input, "--alpha: must be in (0, 1)");
  if (o.min_runs < 2) throw Error(ErrorKind::bad_input, "--min-runs: must be >= 2");
  if (!(o.min_change_ms >= 0)) throw Error(ErrorKind::bad_input, "--min-change-ms: must be >= 0");
  if (!(o.floor_confidence > 0 && o.floor_confidence < 1))
    throw Error(ErrorKind::bad_input, "--floor-confidence: must be in (0, 1)");
  std::vector<std::string> base_dirs = o.baselines, cur_dirs = o.currents;
  if (!o.baseline.empty() || !o.current.empty()) {
    if (!base_dirs.empty() || !cur_dirs.empty())
      throw Error(ErrorKind::bad_input,
                  "compare: give BASELINE CURRENT or --baseline RUN... --current RUN..., not both");
    if (o.current.empty()) throw Error(ErrorKind::bad_input, "compare: CURRENT: required after BASELINE");
    base_dirs = {o.baseline};
    cur_dirs = {o.current};
  }
  if (base_dirs.empty()) throw Error(ErrorKind::bad_input, "compare: --baseline: at least one run is required");
  if (cur_dirs.empty()) throw Error(ErrorKind::bad_input, "compare: --current: at least one run is required");
  std::vector<RunRecord> base, cur;
  for (const auto& d : base_dirs) base.push_back(load_run_with_requests(d));
  for (const auto& d : cur_dirs) cur.push_back(load_run_with_requests(d));
  std::vector<const RunRecord*> bp, cp;
  for (const auto& r : base) bp.push_back(&r);
  for (const auto& r : cur) cp.push_back(&r);
  CompareResult r = compare_run_sets(bp, cp,
                                     {.threshold = o.threshold,
                                      .alpha = o.alpha,
                                      .min_runs_for_test = o.min_runs,
                                      .min_change_s = o.min_change_ms / 1000,
                                      .floor_confidence = o.floor_confidence,
                                      .judge_contaminated = o.judge_contaminated});
  if (!o.html.empty()) refenc::write_file_atomic(o.html, render_compare_html(base.front(), cur.front(), r));
  if (o.json)
    std::cout << to_json(r).dump(2) << '\n';
  else
    std::cout << format_compare(r);
  return r.regressions > 0 ? compare_exit_regression : 0;
}

refenc::cli::Registration compare_command{
    "compare", "Compare profile runs cell by cell and flag regressions beyond the noise floor", [](CLI::App& app) {
      auto o = std::make_shared<CompareCommandOptions>();
      app.add_option("baseline", o->baseline, "Baseline run folder or report.json");
      app.add_option("current", o->current, "Current run folder or report.json");
      app.add_option("--baseline", o->baselines, "Baseline runs (several: their noise floor and a U test)");
      app.add_option("--current", o->currents, "Current runs");
      app.add_option("--threshold", o->threshold, "Relative change counted as a regression (default 0.10)");
      app.add_option("--alpha", o->alpha, "Level of the one-sided Mann-Whitney U test over per-run figures (0.05)");
      app.add_option("--min-runs", o->min_runs, "Runs each side needs before the U test applies (default 3)");
      app.add_option("--min-change-ms", o->min_change_ms,
                     "Smallest latency change that can be a regression, in ms (default 1)");
      app.add_option("--floor-confidence", o->floor_confidence,
                     "Two-sided level of the pooled A/A bound in the noise floor (default 0.99)");
      app.add_flag("--judge-contaminated", o->judge_contaminated,
                   "Judge groups with contaminated cells too (their regressions are marked)");
      app.add_flag("--json", o->json, "Print JSON");
      app.add_option("--html", o->html, "Also write an HTML comparison page to this file (first run of each side)");
      app.footer(
          "A regression: p95 E2E or p95 encode slower, or throughput lower, by more than the threshold (a latency "
          "also by at least --min-change-ms) and more than the metric's noise floor (the largest of: the group's A/A "
          "spread in any run; the --floor-confidence prediction bound of one A/A pair pooled over every group of "
          "the phase, scaled to the runs a side; the between-run spread of a side with two runs or more), with a 95% "
          "bootstrap interval that excludes no change, and, with --min-runs runs on each side, a one-sided "
          "Mann-Whitney U test over per-run figures at --alpha. A group with a cell that stayed contaminated (a "
          "busy machine) decides nothing unless --judge-contaminated. Exit codes: 0 none; 10 regression; 2-7 "
          "errors.");
      return [o] { return run_compare(*o); };
    }};

}  // namespace
