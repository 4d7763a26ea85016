// Realistic reuse: the reference schedule (Zipf popularity, never-seen references) and each cell's
// measured hit ratio beside the miss-ratio curve of its own trace.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include "fake_backend.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/run/manifest.hpp"
#include "profile/run/profiler.hpp"
#include "profile/run/reference_schedule.hpp"
#include "profile/stats/miss_ratio_curve.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

Manifest reuse_manifest(const std::string& references, const std::string& phases, std::size_t max_bytes) {
  json j = json::parse(R"({
    "schema_version": 1, "name": "fake-reuse", "seed": 5,
    "models": [{"name": "single", "synthesis": {"source": "test", "step_base_ms": 0.01, "steps_per_audio_second": 1}}],
    "references": )" + references + R"(,
    "texts": ["Hello there.", "A second sentence."],
    "phases": )" + phases + R"(,
    "arms": [{"name": "m4a"}],
    "cache": {"max_bytes": )" + std::to_string(max_bytes) + R"(},
    "gate": {"bootstrap_resamples": 100}
  })");
  return parse_manifest(j, std::string(REFENC_SOURCE_DIR) + "/workloads/fake-reuse.json");
}

RunRecord run_fake(const Manifest& m, const std::string& dir) {
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    auto b = std::make_unique<FakeBackend>(fake_info(spec.name, false), false);
    b->hook->spin = 10;
    return b;
  };
  run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  return load_run_with_requests(dir);
}

std::string temp_dir(const char* name) {
  auto p = std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

}  // namespace

TEST_CASE("reference schedule: the fixed cycle by default, seeded Zipf popularity, never-seen references") {
  PhaseSpec phase;
  phase.requests = 2000;
  phase.distinct = 50;
  ReferenceSpec cycle;
  auto c = reference_schedule(cycle, phase, 52, 1);
  REQUIRE(c.size() == 2000);
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(c[i] == i % 50);
  CHECK(never_seen_count(cycle, phase) == 0);

  ReferenceSpec zipf;
  zipf.zipf = 1.0;
  auto z = reference_schedule(zipf, phase, 52, 1);
  CHECK(z == reference_schedule(zipf, phase, 52, 1));
  CHECK(z != reference_schedule(zipf, phase, 52, 2));
  std::map<std::size_t, int> count;
  for (auto r : z) {
    CHECK(r < 50);
    ++count[r];
  }
  // Rank 0 is about twice as popular as rank 1 and ten times rank 9 (1/H(50) = 22% of requests).
  CHECK(count[0] > 1.5 * count[1]);
  CHECK(count[0] > 5 * count[9]);
  CHECK(count[0] == Approx(2000 / 4.499).epsilon(0.15));

  ReferenceSpec uniform;
  uniform.zipf = 0.0;
  std::map<std::size_t, int> u;
  for (auto r : reference_schedule(uniform, phase, 52, 3)) ++u[r];
  CHECK(u.size() == 50);
  for (auto [r, n] : u) CHECK(n == Approx(40).margin(22));

  ReferenceSpec fresh = zipf;
  fresh.never_seen_share = 0.1;
  CHECK(never_seen_count(fresh, phase) == 200);
  auto f = reference_schedule(fresh, phase, 52, 1);
  std::set<std::size_t> seen;
  std::size_t beyond = 0;
  for (auto r : f) {
    if (r >= 52) {
      ++beyond;
      CHECK(seen.insert(r).second);
      CHECK(r < 52 + 200);
    } else {
      CHECK(r < 50);
    }
  }
  CHECK(beyond == 200);
}

TEST_CASE("manifest: popularity and never_seen_share are read, checked and need enough references") {
  Manifest m = reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 40, "warmup": 0,
                                 "popularity": {"zipf": 0.8}, "never_seen_share": 0.25})",
                              R"([{"kind": "cold", "requests": 40, "distinct": 30, "concurrency": [1]}])", 1 << 20);
  REQUIRE(m.references.zipf);
  CHECK(*m.references.zipf == 0.8);
  CHECK(m.references.never_seen_share == 0.25);
  CHECK(m.never_seen_references() == 10);
  CHECK_THROWS_WITH(reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 39, "warmup": 0,
                                      "never_seen_share": 0.25})",
                                   R"([{"kind": "cold", "requests": 40, "distinct": 30}])", 1 << 20),
                    Catch::Contains("references.variants: must provide at least 40"));
  CHECK_THROWS_WITH(reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 40, "popularity": {"zipf": -1}})",
                                   R"([{"kind": "cold"}])", 1 << 20),
                    Catch::Contains("references.popularity.zipf: must be >= 0"));
  CHECK_THROWS_WITH(reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 40, "popularity": {}})",
                                   R"([{"kind": "cold"}])", 1 << 20),
                    Catch::Contains("references.popularity.zipf: required"));
  Manifest plain = reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 40})", R"([{"kind": "cold"}])", 1 << 20);
  CHECK_FALSE(plain.references.zipf);
  CHECK(plain.references.never_seen_share == 0);
}

TEST_CASE("a Zipf cell at concurrency 1 hits as its miss-ratio curve predicts, within 2 points") {
  // ~30-byte fake artifacts and a 450-byte tier: about 15 of the 60 popular references fit.
  Manifest m = reuse_manifest(R"({"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 100,
                                 "warmup": 0, "popularity": {"zipf": 0.9}, "never_seen_share": 0.05})",
                              R"([{"kind": "cold", "requests": 800, "distinct": 60, "concurrency": [1]}])", 450);
  std::string dir = temp_dir("refenc-reuse-test");
  RunRecord run = run_fake(m, dir);
  REQUIRE(run.cells.size() == 1);
  const Cell& cell = run.cells[0];
  REQUIRE(cell.reuse);
  const CacheReuse& r = *cell.reuse;
  CHECK(r.requests == 800);
  CHECK(r.max_bytes == 450);
  CHECK(r.hits == cell.outcomes.at("hit"));
  INFO("measured " << r.hit_ratio() << " predicted " << r.predicted_hit_ratio);
  CHECK(r.hit_ratio() > 0.2);
  CHECK(r.hit_ratio() < 0.9);
  CHECK(r.hit_ratio() == Approx(r.predicted_hit_ratio).margin(0.02));
  CHECK(r.points.size() == 16);
  CHECK(r.points.back().first == r.working_set_bytes);

  // Recomputed from requests.jsonl alone: rows with a key, in send order, as (key, stored_bytes).
  const auto& rows = run.requests_of(cell.key);
  std::vector<TraceAccess> trace;
  std::size_t hits = 0;
  for (const auto& q : rows) {
    CHECK(q.worker == 0);
    CHECK(q.stored_bytes > 0);
    CHECK(q.key.size() == 64);
    trace.push_back({q.key, q.stored_bytes});
    hits += q.outcome == "hit";
  }
  MissRatioCurve mrc = miss_ratio_curve(trace);
  CHECK(hits == r.hits);
  CHECK(mrc.hit_ratio(450, m.cache.max_items) == r.predicted_hit_ratio);
  CHECK(mrc.distinct() == r.distinct);
  CHECK(validate_report_file(dir).empty());
  std::filesystem::remove_all(dir);
}
