// The run folder of a profile: report.json (schema reports/report.schema.json), requests.jsonl (one
// line per request, with its cell id) and summary.md, each written atomically (temp file + rename).
//
//   write_run(dir, report, requests_by_cell);                // three files in dir
//   LoadedRun run = load_run("runs/20261202-143000-nightly");  // or the path of its report.json
//   run.report["cells"]; run.requests.at(cell_id);
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/manifest.hpp"
#include "profile/model_backend.hpp"
#include "profile/runner.hpp"

namespace refenc::profile {

inline constexpr int report_schema_version = 1;

/// Host, CPU, cores, LibTorch version and BLAS, git revision, manifest digest, seed, start time.
nlohmann::json make_context(const Manifest& manifest);

/// LibTorch version, parallel info and build config (torch_info.cpp).
nlohmann::json torch_context();

/// Writes `content` to `path` through a temp file in the same folder and a rename.
void write_file_atomic(const std::string& path, const std::string& content);

/// Writes report.json, requests.jsonl and summary.md into `dir` (created if needed).
void write_run(const std::string& dir, const nlohmann::json& report,
               const std::map<std::string, std::vector<RequestRecord>>& requests);

struct LoadedRun {
  std::string dir;
  nlohmann::json report;
  std::map<std::string, std::vector<RequestRecord>> requests;
};

/// Reads a run folder (or a report.json path; requests.jsonl is read from beside it).
LoadedRun load_run(const std::string& path);

/// The per-cell table printed at the end of a profile (fixed-width text).
std::string summary_table(const nlohmann::json& report);

/// summary.md: context, stage kinds, the table, warnings and the gate.
std::string summary_markdown(const nlohmann::json& report);

/// The schema, read from reports/report.schema.json in the source tree (or `path` when given).
nlohmann::json load_report_schema(const std::string& path = {});

}  // namespace refenc::profile
