// Intra-op threads as a profiled dimension: a manifest's models[].encoder.threads given as a list
// makes one cell per thread count (ids ".../c2/t1/r0"), each with that compute recorded on the cell and
// on every request row; the gate judges the first listed count.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "fake_backend.hpp"
#include "manifest_error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

const std::string kThreadsPath = std::string(refenc::source_dir()) + "/workloads/threads-test.json";

json threads_manifest() {
  return json::parse(R"({
    "schema_version": 1, "name": "fake-threads", "seed": 9,
    "models": [{"name": "fake", "encoder": {"threads": [2, 1]},
                "synthesis": {"source": "test", "step_base_ms": 0.2, "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac"], "variants": 8, "warmup": 1},
    "texts": ["Hello there."],
    "concurrency": [2],
    "phases": [{"kind": "cold", "requests": 4}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 2, "max_batch_wait_ms": 1}],
    "gate": {"bootstrap_resamples": 200}
  })");
}

std::string threads_error_of(const json& j) { return testing::manifest_error(j, kThreadsPath); }

/// FakeBackend that can set its (pretend) intra-op threads and reports them.
class ThreadedFakeBackend : public FakeBackend {
 public:
  using FakeBackend::FakeBackend;
  int intra_op_threads() const override { return threads; }
  bool set_intra_op_threads(int t) override {
    threads = t;
    if (calls) calls->push_back(t);
    return true;
  }
  int threads = 0;
  std::vector<int>* calls = nullptr;  ///< Outlives the backend, which the profiler drops after its model.
};

}  // namespace

TEST_CASE("cell keys carry threads only when they are a dimension") {
  CellKey plain{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0};
  CHECK(plain.id() == "fish-s2-pro/m4a/cold/c8/r0");
  CellKey threaded{"fish-s2-pro", Arm::m4a, Phase::cold, 8, 1, 2};
  CHECK(threaded.id() == "fish-s2-pro/m4a/cold/c8/t2/r1");
  CHECK(threaded.group().label() == "fish-s2-pro/m4a/cold/c8/t2");
  CHECK(threaded.group() != plain.group());
}

TEST_CASE("encoder.threads: a number, or a list of thread counts profiled as a dimension") {
  Manifest m = parse_manifest(threads_manifest(), kThreadsPath);
  CHECK(m.models[0].thread_levels == std::vector<int>{2, 1});
  CHECK(m.models[0].encoder.threads == 2);
  json j = threads_manifest();
  j["models"][0]["encoder"]["threads"] = 3;
  m = parse_manifest(j, kThreadsPath);
  CHECK(m.models[0].thread_levels.empty());
  CHECK(m.models[0].encoder.threads == 3);
  j["models"][0]["encoder"]["threads"] = json::array();
  CHECK(threads_error_of(j) == kThreadsPath + ": models[0].encoder.threads: must not be empty");
  j["models"][0]["encoder"]["threads"] = {1, 0};
  CHECK(threads_error_of(j) == kThreadsPath + ": models[0].encoder.threads[1]: must be >= 1");
  j["models"][0]["encoder"]["threads"] = {2, 2};
  CHECK(threads_error_of(j) == kThreadsPath + ": models[0].encoder.threads[1]: duplicate thread count 2");
  j["models"][0]["encoder"]["threads"] = {"two"};
  CHECK(threads_error_of(j) == kThreadsPath + ": models[0].encoder.threads[0]: must be an integer");
  j["models"][0]["encoder"]["threads"] = "2";
  CHECK(threads_error_of(j) == kThreadsPath + ": models[0].encoder.threads: must be an integer");
}

TEST_CASE("threads x concurrency: one cell per thread count, compute on cells and rows, gate on the first") {
  Manifest m = parse_manifest(threads_manifest(), kThreadsPath);
  std::vector<int> calls;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    auto b = std::make_unique<ThreadedFakeBackend>(fake_info(spec.name, true), true);
    b->calls = &calls;
    return b;
  };
  auto dir = (std::filesystem::temp_directory_path() / ("refenc-threads-test-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  REQUIRE(r.run.cells.size() == 4);  // 2 thread counts x 2 arms at c2
  std::vector<std::string> ids;
  for (const Cell& c : r.run.cells) {
    ids.push_back(c.key.id());
    REQUIRE(c.compute);
    CHECK(c.compute->intra_op_threads == c.key.threads);
    for (const RequestRecord& q : r.run.requests_of(c.key)) CHECK(q.intra_op_threads == c.key.threads);
  }
  CHECK(ids == std::vector<std::string>{"fake/m4a/cold/c2/t2/r0", "fake/m4b/cold/c2/t2/r0", "fake/m4a/cold/c2/t1/r0",
                                        "fake/m4b/cold/c2/t1/r0"});
  CHECK(calls == std::vector<int>{2, 2, 2, 1, 1, 1});  // set before each cell: m4a, m4b, the m4a A/A twin
  REQUIRE(r.run.gate);
  const ModelVerdict& v = r.run.gate->models.at(0);
  CHECK(v.verdict != Verdict::missing_arm);
  CHECK(v.levels.size() == 1);
  // The folder reads back with the same keys, and the report is schema-valid.
  RunRecord back = load_run_with_requests(dir);
  CHECK(to_json(back) == to_json(r.run));
  CHECK(back.cells[2].key.threads == 1);
  CHECK(back.requests_of(back.cells[2].key).size() == 4);
  CHECK(validate_report_file(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("a backend that cannot set threads refuses a thread list, naming the model") {
  Manifest m = parse_manifest(threads_manifest(), kThreadsPath);
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    return std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
  };
  auto dir = (std::filesystem::temp_directory_path() / ("refenc-threads-none-" + std::to_string(::getpid()))).string();
  CHECK_THROWS_WITH(run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false}),
                    "fake: this backend cannot set intra-op threads (encoder.threads as a list)");
  std::filesystem::remove_all(dir);
}
