// The run folder of a profile: report.json (schema reports/report.schema.json), requests.jsonl (one
// line per request, with its cell id) and summary.md, each written atomically (temp file + rename).
//
//   write_run("runs/x", run, summary_markdown(run));        // three files in runs/x
//   RunRecord run = load_run("runs/20261202-143000-nightly"); // or the path of its report.json
//   const auto& rows = run.requests_of(run.cells[0].key);   // empty when !run.have_requests
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Writes report.json, requests.jsonl (cells in report order) and `summary_md` as summary.md into
/// `dir` (created if needed); sets nothing in `run`.
void write_run(const std::string& dir, const RunRecord& run, const std::string& summary_md);

/// Reads a run folder (or a report.json path). requests.jsonl beside it is read when present
/// (`have_requests`). Throws Error(bad_input) naming the file, and the line or field, when either
/// file is not what a profile writes.
RunRecord load_run(const std::string& path);

/// Like load_run, and requests.jsonl must be there (the gate and compare recompute from it).
RunRecord load_run_with_requests(const std::string& path);

/// Every violation of the report schema by the report.json at `path` (a run folder or the file);
/// empty when valid. `schema_path` defaults to reports/report.schema.json of the source tree.
std::vector<std::string> validate_report_file(const std::string& path, const std::string& schema_path = {});

/// Every violation of the report schema by the report `run` would be written as.
std::vector<std::string> validate_report(const RunRecord& run, const std::string& schema_path = {});

}  // namespace refenc::profile
