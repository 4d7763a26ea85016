// The request timelines as a Chrome trace-event file: the format's fields, one track per worker, and
// each request's stages nested in its request event and summing to its E2E.
#include <catch2/catch.hpp>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "fake_backend.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/trace_events.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

std::string profile_dir() {
  auto p = std::filesystem::temp_directory_path() / ("refenc-trace-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  json j = json::parse(R"({
    "schema_version": 1, "name": "fake-trace", "seed": 3,
    "models": [{"name": "batcher", "synthesis": {"source": "test", "step_base_ms": 0.05, "prefill_base_ms": 0.05,
                                                  "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac"], "variants": 12, "warmup": 1},
    "texts": ["Hello there.", "A second sentence."],
    "phases": [{"kind": "cold", "requests": 16, "distinct": 10, "concurrency": [1, 3]}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 3, "max_batch_wait_ms": 1}],
    "gate": {"bootstrap_resamples": 100}
  })");
  Manifest m = parse_manifest(j, std::string(refenc::source_dir()) + "/workloads/fake-trace.json");
  BackendFactory factory = [](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    return std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
  };
  run_profile(m, factory, {.out_dir = p.string(), .sleep_synthesis = true});
  return p.string();
}

}  // namespace

TEST_CASE("report --trace: a trace-event file whose request events nest and sum to E2E") {
  const std::string dir = profile_dir();
  const std::string out = dir + "/timeline.json";
  CHECK(write_trace_events(dir, out) == out);
  std::ifstream in(out);
  const json file = json::parse(in);
  RunRecord run = load_run_with_requests(dir);

  REQUIRE(file.contains("traceEvents"));
  CHECK(file["displayTimeUnit"] == "ms");
  const json& events = file["traceEvents"];
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  // Complete events: each request event followed by its stages.
  std::vector<std::pair<json, std::vector<json>>> requests;
  for (const json& e : events) {
    INFO(e.dump());
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["name"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e["tid"].is_number_integer());
    REQUIRE(e["args"].is_object());
    const int pid = e["pid"], tid = e["tid"];
    if (e["ph"] == "M") {
      REQUIRE(e["args"]["name"].is_string());
      if (e["name"] == "process_name")
        processes[pid] = e["args"]["name"];
      else if (e["name"] == "thread_name")
        threads[{pid, tid}] = e["args"]["name"];
      else
        FAIL("unexpected metadata event");
      continue;
    }
    REQUIRE(e["ph"] == "X");
    REQUIRE(e["ts"].is_number());
    REQUIRE(e["dur"].is_number());
    CHECK(e["dur"].get<double>() >= 0);
    REQUIRE(e["cat"].is_string());
    CHECK(processes.count(pid) == 1);  // metadata comes first
    CHECK(threads.count({pid, tid}) == 1);
    if (e["name"] == "request")
      requests.push_back({e, {}});
    else {
      REQUIRE(!requests.empty());
      requests.back().second.push_back(e);
    }
  }
  // One process per cell, named after it; a closed loop at concurrency c has c worker tracks.
  REQUIRE(processes.size() == run.cells.size());
  std::size_t total = 0;
  for (std::size_t c = 0; c < run.cells.size(); ++c) {
    const int pid = static_cast<int>(c) + 1;
    CHECK(processes[pid] == "cell " + run.cells[c].key.id());
    std::set<int> worker_tracks;
    for (const auto& [k, name] : threads)
      if (k.first == pid && name.rfind("worker ", 0) == 0 && name.find("overlap") == std::string::npos)
        worker_tracks.insert(k.second);
    CHECK(worker_tracks.size() == static_cast<std::size_t>(run.cells[c].key.concurrency));
    total += run.requests_of(run.cells[c].key).size();
  }
  REQUIRE(requests.size() == total);

  // Each request: its stages on its track, within it, end to end, summing to its E2E (1 us rounding).
  std::map<std::pair<int, std::size_t>, const RequestRecord*> rows;
  for (std::size_t c = 0; c < run.cells.size(); ++c)
    for (const RequestRecord& r : run.requests_of(run.cells[c].key)) rows[{static_cast<int>(c) + 1, r.index}] = &r;
  std::map<std::pair<int, int>, double> track_end;
  for (const auto& [req, children] : requests) {
    INFO(req.dump());
    const int pid = req["pid"], tid = req["tid"];
    const RequestRecord& row = *rows.at({pid, req["args"]["index"].get<std::size_t>()});
    const double ts = req["ts"], dur = req["dur"];
    CHECK(ts == Approx(row.scheduled_s * 1e6).margin(1));
    CHECK(dur == Approx(row.e2e_s * 1e6).margin(1));
    CHECK(req["args"]["worker"] == row.worker);
    CHECK(req["args"]["outcome"] == row.outcome);
    // Requests on one track do not overlap, so nesting is by time alone.
    CHECK(ts >= track_end[{pid, tid}] - 1e-6);
    track_end[{pid, tid}] = ts + dur;
    std::vector<std::string> names;
    double at = ts, sum = 0;
    for (const json& s : children) {
      CHECK(s["pid"] == pid);
      CHECK(s["tid"] == tid);
      CHECK(s["ts"].get<double>() == Approx(at).margin(1e-6));
      names.push_back(s["name"]);
      at = s["ts"].get<double>() + s["dur"].get<double>();
      sum += s["dur"].get<double>();
    }
    CHECK(names == std::vector<std::string>{"queue", "preprocessing", "encode", "synthesis"});
    CHECK(sum == Approx(dur).margin(1));
    CHECK(at <= ts + dur + 1);
    for (const json& s : children) {
      CHECK(s["cat"] == (s["name"] == "synthesis" ? "modelled" : "measured"));
      if (s["name"] == "encode") CHECK(s["args"]["batch_size"] == row.batch_size);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("requests.jsonl and the trace file carry each batched encode's batch id, size and padding") {
  const std::string dir = profile_dir();
  RunRecord run = load_run_with_requests(dir);
  std::size_t batched = 0;
  for (const Cell& c : run.cells) {
    INFO(c.key.id());
    std::map<std::uint64_t, int> members, sizes;
    for (const RequestRecord& r : run.requests_of(c.key)) {
      if (r.batch_size == 0) {
        CHECK(r.batch_id == 0);
        continue;
      }
      ++batched;
      CHECK(c.key.arm == Arm::m4b);
      REQUIRE(r.batch_id > 0);
      ++members[r.batch_id];
      if (sizes.count(r.batch_id)) CHECK(sizes[r.batch_id] == r.batch_size);  // one batch, one size
      sizes[r.batch_id] = r.batch_size;
      CHECK(r.batch_padding >= 0);
      CHECK(r.batch_padding < 1);
    }
    for (const auto& [id, n] : members) CHECK(n <= sizes[id]);
  }
  CHECK(batched > 0);
  const json file = trace_events_json(request_timelines(run));
  std::size_t with_id = 0;
  for (const json& e : file["traceEvents"])
    if (e["name"] == "encode" && e["args"].contains("batch_id")) {
      ++with_id;
      CHECK(e["args"]["batch_id"].get<std::uint64_t>() > 0);
      CHECK(e["args"]["batch_size"].get<int>() >= 1);
    }
  CHECK(with_id == batched);
}
