#include "profile/run_report.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/gate.hpp"

#ifndef REFENC_SOURCE_DIR
#define REFENC_SOURCE_DIR "."
#endif

namespace refenc::profile {
namespace {

using nlohmann::json;

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

json make_context(const Manifest& manifest) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string rev = command_output(std::string("git -C '") + REFENC_SOURCE_DIR + "' rev-parse HEAD 2>/dev/null");
  if (rev.empty()) rev = "unknown (no git revision)";
  else if (!command_output(std::string("git -C '") + REFENC_SOURCE_DIR + "' status --porcelain -uno 2>/dev/null").empty())
    rev += "-dirty";
  json torch;
  try {
    torch = torch_context();
  } catch (const std::exception& e) {
    torch = {{"version", "unavailable"}, {"reason", e.what()}};
  }
  return json{{"host", host},
              {"cpu_model", cpu_model()},
              {"cores", std::thread::hardware_concurrency()},
              {"libtorch", torch},
              {"git_revision", rev},
              {"manifest_path", manifest.path},
              {"manifest_sha256", manifest.sha256},
              {"seed", manifest.seed},
              {"started_utc", utc_now()}};
}

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, tmp + ": cannot create file");
    out << content;
    out.flush();
    if (!out) throw Error(ErrorKind::io, tmp + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorKind::io, path + ": cannot rename into place: " + ec.message());
  }
}

void write_run(const std::string& dir, const json& report, const std::map<std::string, std::vector<RequestRecord>>& requests) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, dir + ": cannot create run folder: " + ec.message());
  std::string lines;
  // Cells in report order, so requests.jsonl reads in run order.
  for (const json& c : report.at("cells")) {
    auto it = requests.find(c.at("id").get<std::string>());
    if (it == requests.end()) continue;
    for (const auto& r : it->second) {
      json j = r.to_json();
      j["cell"] = it->first;
      lines += j.dump() + '\n';
    }
  }
  write_file_atomic(dir + "/requests.jsonl", lines);
  write_file_atomic(dir + "/summary.md", summary_markdown(report));
  write_file_atomic(dir + "/report.json", report.dump(2) + '\n');
}

LoadedRun load_run(const std::string& path) {
  namespace fs = std::filesystem;
  LoadedRun run;
  fs::path p(path);
  fs::path report_path = fs::is_directory(p) ? p / "report.json" : p;
  run.dir = report_path.parent_path().string();
  std::ifstream in(report_path);
  if (!in) throw Error(ErrorKind::bad_input, report_path.string() + ": cannot open report");
  try {
    run.report = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::bad_input, report_path.string() + ": not valid JSON: " + e.what());
  }
  if (!run.report.is_object() || run.report.value("schema", "") != "refenc-profile-report")
    throw Error(ErrorKind::bad_input, report_path.string() + ": not a refenc profile report (schema field)");
  fs::path req = report_path.parent_path() / "requests.jsonl";
  std::ifstream rin(req);
  if (!rin) throw Error(ErrorKind::bad_input, req.string() + ": cannot open the report's raw requests");
  std::string line;
  std::size_t n = 0;
  while (std::getline(rin, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      json j = json::parse(line);
      run.requests[j.at("cell").get<std::string>()].push_back(RequestRecord::from_json(j));
    } catch (const std::exception& e) {
      throw Error(ErrorKind::bad_input, req.string() + ": line " + std::to_string(n) + ": " + e.what());
    }
  }
  return run;
}

std::string summary_table(const json& report) {
  std::ostringstream os;
  os << fmt::format("{:<34} {:>4} {:>4} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6}\n", "cell", "n", "err",
                    "pre p50", "enc p50", "enc p95", "ttfa p95", "e2e p50", "e2e p95", "req/s", "hit%");
  for (const json& c : report.at("cells")) {
    const json& s = c.at("stages");
    auto ms = [&](const char* st, const char* q) { return 1000.0 * s.at(st).value(q, 0.0); };
    double n = c.value("count", 0);
    const json& o = c.at("outcomes");
    double hits = o.value("hit", 0) + o.value("disk_hit", 0) + o.value("merged", 0);
    os << fmt::format("{:<34} {:>4} {:>4} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.2f} {:>5.0f}%\n",
                      c.value("id", ""), c.value("count", 0), c.value("errors", 0), ms("preprocessing", "p50"),
                      ms("encode", "p50"), ms("encode", "p95"), ms("ttfa", "p95"), ms("e2e", "p50"), ms("e2e", "p95"),
                      c.value("throughput_rps", 0.0), n > 0 ? 100.0 * hits / n : 0.0);
  }
  os << "(latencies in ms; preprocessing and encode measured, synthesis modelled; hit% = hit + disk_hit + merged)\n";
  return os.str();
}

std::string summary_markdown(const json& report) {
  std::ostringstream os;
  const json& ctx = report.at("context");
  os << "# refenc profile: " << report.at("manifest").value("name", "") << "\n\n";
  os << "- status: **" << report.value("status", "") << "**\n";
  os << "- host: " << ctx.value("host", "") << ", " << ctx.value("cpu_model", "") << ", " << ctx.value("cores", 0)
     << " cores\n";
  if (ctx.contains("libtorch"))
    os << "- LibTorch " << ctx["libtorch"].value("version", "") << ", BLAS " << ctx["libtorch"].value("blas", "") << "\n";
  os << "- git " << ctx.value("git_revision", "") << ", manifest " << ctx.value("manifest_path", "") << " (sha256 "
     << ctx.value("manifest_sha256", "").substr(0, 16) << "...), seed " << ctx.value("seed", 0) << "\n";
  for (const json& m : report.at("models"))
    os << "- model " << m.value("name", "") << ": " << m.value("evidence_grade", "") << "; "
       << m.at("eligibility").value("reason", "") << "\n";
  os << "\nStages: preprocessing and reference encode are **measured**; synthesis is **modelled** (a "
        "continuous-batching engine that sleeps; parameters and their sources in the manifest); TTFA and E2E "
        "add both. Percentiles: nearest rank.\n\n```\n"
     << summary_table(report) << "```\n";
  if (report.contains("skipped") && !report["skipped"].empty()) {
    os << "\nSkipped:\n";
    for (const json& s : report["skipped"])
      os << "- " << s.value("model", "") << " " << s.value("arm", "") << ": " << s.value("reason", "") << "\n";
  }
  bool any = false;
  for (const json& c : report.at("cells"))
    for (const json& w : c.value("warnings", json::array())) {
      if (!any) os << "\nWarnings:\n";
      any = true;
      os << "- " << c.value("id", "") << ": " << w.get<std::string>() << "\n";
    }
  if (report.contains("gate") && report["gate"].is_object() && report["gate"].contains("models"))
    os << "\n```\n" << format_gate(report["gate"]) << "```\n";
  return os.str();
}

json load_report_schema(const std::string& path) {
  std::string p = path.empty() ? std::string(REFENC_SOURCE_DIR) + "/reports/report.schema.json" : path;
  std::ifstream in(p);
  if (!in) throw Error(ErrorKind::io, p + ": cannot open the report schema");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::bad_input, p + ": not valid JSON: " + e.what());
  }
}

}  // namespace refenc::profile
