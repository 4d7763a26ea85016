// The HTML report of a profile run: one self-contained page (inline CSS and SVG, no script, no network)
// with the M4b gate verdict per model and its evidence, latency CDFs of M4a against M4b, the stage
// breakdown, throughput with intervals, cache counters, CPU/GPU utilisation and the run context. Also
// the page comparing a baseline run with a current one, regressions highlighted. Every string taken
// from a run is escaped. Throughput intervals use stats/throughput.hpp, as the gate does.
//
//   std::string path = write_html_report("runs/20261202-143000-nightly");  // -> .../report.html
//   std::string page = render_html_report(load_run("runs/x"));
//   std::string diff = render_compare_html(base, cur, compare_runs(base, cur, {}));
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Title and throughput-bootstrap settings of a page.
struct HtmlReportOptions {
  std::string title;                  ///< Page title; "refenc profile: <manifest name>" when empty.
  int resamples = 0;                  ///< Throughput bootstrap resamples; 0: the run's gate setting.
  double confidence = 0;              ///< Level of those intervals; 0: the run's gate setting.
  std::optional<std::uint64_t> seed;  ///< Seeds that bootstrap; default: the run's seed.
};

/// The report page of `run`. Without raw requests (`run.have_requests` false) the CDFs are drawn from
/// the report's percentiles and the throughput intervals from the spread over repeats, and the
/// captions say so.
std::string render_html_report(const RunRecord& run, const HtmlReportOptions& options = {});

/// Renders the run at `run_dir` (a folder or its report.json; requests.jsonl when present) to `out`
/// (default `run_dir`/report.html), written atomically; returns the path written.
std::string write_html_report(const std::string& run_dir, const std::string& out = {},
                              const HtmlReportOptions& options = {});

/// The comparison page: both runs' verdicts side by side, every compared metric with its change and
/// interval, regressions highlighted.
std::string render_compare_html(const RunRecord& baseline, const RunRecord& current, const CompareResult& comparison,
                                const HtmlReportOptions& options = {});

}  // namespace refenc::profile
