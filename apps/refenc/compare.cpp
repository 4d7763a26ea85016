// refenc compare BASELINE CURRENT: per-cell changes between two profile runs, regressions flagged.
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

struct Options {
  std::string baseline, current;
  double threshold = 0.10;
  bool json = false;
  std::string html;
};

int run(const Options& o) {
  using namespace refenc::profile;
  if (!(o.threshold > 0)) throw refenc::Error(refenc::ErrorKind::bad_input, "--threshold: must be > 0");
  RunRecord base = load_run_with_requests(o.baseline), cur = load_run_with_requests(o.current);
  CompareResult r = compare_runs(base, cur, {.threshold = o.threshold});
  if (!o.html.empty()) refenc::write_file_atomic(o.html, render_compare_html(base, cur, r));
  if (o.json)
    std::cout << to_json(r).dump(2) << '\n';
  else
    std::cout << format_compare(r);
  return r.regressions > 0 ? compare_exit_regression : 0;
}

refenc::cli::Registration reg{
    "compare", "Compare two profile runs cell by cell and flag regressions", [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("baseline", o->baseline, "Baseline run folder or report.json")->required();
      app.add_option("current", o->current, "Current run folder or report.json")->required();
      app.add_option("--threshold", o->threshold, "Relative change counted as a regression (default 0.10)");
      app.add_flag("--json", o->json, "Print JSON");
      app.add_option("--html", o->html, "Also write an HTML comparison page to this file");
      app.footer(
          "A regression: p95 E2E or p95 encode slower, or throughput lower, by more than the threshold with "
          "a 95% bootstrap interval that excludes no change. Exit codes: 0 none; 10 regression; 2-7 errors.");
      return [o] { return run(*o); };
    }};

}  // namespace
