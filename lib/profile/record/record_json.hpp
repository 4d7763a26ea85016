// The JSON of a profile run: the one place that knows the shape of report.json (schema
// reports/report.schema.json) and of requests.jsonl lines, in both directions. Everything else reads
// and writes the typed record (run_record.hpp).
//
//   nlohmann::json j = to_json(run);                          // report.json's content
//   RunRecord back = run_from_json(j, "runs/x/report.json");  // throws Error(bad_input) naming the field
//   std::string line = to_json(run.requests_of(run.cells[0].key)[0]).dump();
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// report.json of `run` (without its raw requests).
nlohmann::json to_json(const RunRecord& run);

/// Reads a report (schema_version 1). `where` names it in errors. Descriptive fields that are absent
/// take their defaults; a field of the wrong type, an unknown arm, phase or verdict, or a missing
/// cell identity is an Error(bad_input) naming the file and the field.
RunRecord run_from_json(const nlohmann::json& report, const std::string& where);

/// One requests.jsonl line (without the "cell" field).
nlohmann::json to_json(const RequestRecord& r);

/// Reads one requests.jsonl line: returns its cell id and the record. Throws Error(bad_input) with
/// `where` (file and line) when the line is not a request.
std::pair<std::string, RequestRecord> request_from_json(const nlohmann::json& line, const std::string& where);

/// The gate block of report.json (also what `refenc gate --json` prints).
nlohmann::json to_json(const GateReport& gate);

/// A cell's telemetry block.
nlohmann::json to_json(const TelemetrySummary& t);

/// What `refenc compare --json` prints.
nlohmann::json to_json(const CompareResult& result);

/// The run context as (dotted name, value) rows, in report order, for display.
std::vector<std::pair<std::string, std::string>> context_rows(const RunContext& context);

/// The manifest's gate block as ("gate.<name>", value) rows, for display.
std::vector<std::pair<std::string, std::string>> gate_spec_rows(const GateSpec& spec);

/// A model's encoder options as one line ("device cpu, dtype float32, ..."), for display.
std::string encoder_text(const EncoderSpec& encoder);

/// The manifest content, pretty-printed.
std::string manifest_text(const ManifestSummary& manifest);

/// How percentiles are computed, as the report states it.
const std::string& percentile_method();

}  // namespace refenc::profile
