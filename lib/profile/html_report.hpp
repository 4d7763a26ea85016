// The HTML report of a profile run: one self-contained page (inline CSS and SVG, no script, no network)
// with the M4b gate verdict per model and its evidence, latency CDFs of M4a against M4b, the stage
// breakdown, throughput with intervals, cache counters, CPU/GPU utilisation and the run context. Also
// the page comparing a baseline run with a current one, regressions highlighted. Needs nlohmann-json
// only; every string taken from a report is escaped.
//
//   std::string path = write_html_report("runs/20261202-143000-nightly");  // -> .../report.html
//   std::string page = render_html_report(report_json, &rows);          // rows from requests.jsonl
//   std::string diff = render_compare_html(base.report, cur.report, compare_result.json);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace refenc::profile {

/// Per-request rows keyed by cell id, as requests.jsonl holds them (one JSON object per request).
using RequestRows = std::map<std::string, std::vector<nlohmann::json>>;

struct HtmlReportOptions {
  std::string title;              ///< Page title; "refenc profile: <manifest name>" when empty.
  int resamples = 1000;           ///< Bootstrap resamples for the throughput intervals.
  double confidence = 0.95;       ///< Level of those intervals.
  std::uint64_t seed = 1;         ///< Seeds that bootstrap (the page is deterministic).
};

/// Reads requests.jsonl; throws refenc::Error (bad_input) naming the file and line on a bad line.
RequestRows read_request_rows(const std::string& jsonl_path);

/// The report page. `requests` may be null: the CDFs are then drawn from the report's percentiles and
/// the throughput intervals from the spread over repeats, and the captions say so.
std::string render_html_report(const nlohmann::json& report, const RequestRows* requests = nullptr,
                               const HtmlReportOptions& options = {});

/// Renders `run_dir`/report.json (with requests.jsonl when present) to `out` (default
/// `run_dir`/report.html), written atomically; returns the path written. `run_dir` may also be the
/// path of a report.json.
std::string write_html_report(const std::string& run_dir, const std::string& out = {},
                              const HtmlReportOptions& options = {});

/// The comparison page: both runs' verdicts side by side, every compared metric with its change and
/// interval, regressions highlighted. `baseline` and `current` are the two report.json objects and
/// `comparison` is compare_runs(...).json.
std::string render_compare_html(const nlohmann::json& baseline, const nlohmann::json& current,
                                const nlohmann::json& comparison, const HtmlReportOptions& options = {});

}  // namespace refenc::profile
