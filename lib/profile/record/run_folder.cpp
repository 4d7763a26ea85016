#include "profile/record/run_folder.hpp"

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/schema_validator.hpp"
#include "util/atomic_file.hpp"
#include "util/source_dir.hpp"

namespace refenc::profile {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path report_path_of(const std::string& path) {
  fs::path p(path);
  if (!fs::exists(p)) throw Error(ErrorKind::bad_input, path + ": no such run folder or report.json");
  return fs::is_directory(p) ? p / "report.json" : p;
}

json read_json_file(const fs::path& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::bad_input, path.string() + ": cannot open " + what);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::bad_input, path.string() + ": not valid JSON: " + e.what());
  }
}

json load_schema(const std::string& path) {
  std::string p = path.empty() ? std::string(refenc::source_dir()) + "/reports/report.schema.json" : path;
  if (!fs::exists(p)) throw Error(ErrorKind::io, p + ": cannot open the report schema");
  return read_json_file(p, "the report schema");
}

void read_requests(const fs::path& path, RunRecord& run) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::bad_input, path.string() + ": cannot open the report's raw requests");
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::string where = path.string() + ": line " + std::to_string(n);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw Error(ErrorKind::bad_input, where + ": not valid JSON: " + e.what());
    }
    auto [cell, record] = request_from_json(j, where);
    run.requests[cell].push_back(std::move(record));
  }
  run.have_requests = true;
}

RunRecord load(const std::string& path, bool need_requests) {
  fs::path report = report_path_of(path);
  RunRecord run = run_from_json(read_json_file(report, "report"), report.string());
  run.dir = report.parent_path().string();
  fs::path req = report.parent_path() / "requests.jsonl";
  if (need_requests || fs::exists(req)) read_requests(req, run);
  return run;
}

}  // namespace

void write_run(const std::string& dir, const RunRecord& run, const std::string& summary_md) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, dir + ": cannot create run folder: " + ec.message());
  std::string lines;
  // Cells in report order, so requests.jsonl reads in run order.
  auto ids = [&](const Cell& c) { return c.aa ? aa_cell_id(c.key) : c.key.id(); };
  std::vector<const Cell*> order;
  for (const Cell& c : run.cells) order.push_back(&c);
  for (const Cell& c : run.aa_cells) order.push_back(&c);
  for (const Cell* cell : order) {
    const Cell& c = *cell;
    std::string id = ids(c);
    auto it = run.requests.find(id);
    if (it == run.requests.end()) continue;
    for (const auto& r : it->second) {
      json j = to_json(r);
      j["cell"] = id;
      lines += j.dump() + '\n';
    }
  }
  if (run.capacity)  // then each sweep's steps, in the order run
    for (const CapacitySweep& s : run.capacity->sweeps)
      for (const RateStep& st : s.steps) {
        auto it = run.requests.find(s.step_id(st.index));
        if (it == run.requests.end()) continue;
        for (const auto& r : it->second) {
          json j = to_json(r);
          j["cell"] = s.step_id(st.index);
          lines += j.dump() + '\n';
        }
      }
  write_file_atomic(dir + "/requests.jsonl", lines);
  write_file_atomic(dir + "/summary.md", summary_md);
  write_file_atomic(dir + "/report.json", to_json(run).dump(2) + '\n');
}

RunRecord load_run(const std::string& path) { return load(path, false); }

RunRecord load_run_with_requests(const std::string& path) { return load(path, true); }

std::vector<std::string> validate_report_file(const std::string& path, const std::string& schema_path) {
  json schema = load_schema(schema_path);
  return validate_schema(schema, read_json_file(report_path_of(path), "report"));
}

std::vector<std::string> validate_report(const RunRecord& run, const std::string& schema_path) {
  return validate_schema(load_schema(schema_path), to_json(run));
}

}  // namespace refenc::profile
