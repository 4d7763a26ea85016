// Realistic reuse: the reference schedule (Zipf popularity, never-seen references) and each cell's
// measured hit ratio beside the miss-ratio curve of its own trace.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "fake_backend.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/reuse_text.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/manifest/reference_schedule.hpp"
#include "profile/stats/miss_ratio_curve.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

Manifest reuse_manifest(const std::string& references, const std::string& phases, std::size_t max_bytes) {
  json j = json::parse(R"({
    "schema_version": 1, "name": "fake-reuse", "seed": 5,
    "models": [{"name": "single", "synthesis": {"source": "test", "step_base_ms": 0.01, "steps_per_audio_second": 1}}],
    "references": )" + references +
                       R"(,
    "texts": ["Hello there.", "A second sentence."],
    "phases": )" + phases +
                       R"(,
    "arms": [{"name": "m4a"}],
    "cache": {"max_bytes": )" +
                       std::to_string(max_bytes) + R"(},
    "gate": {"bootstrap_resamples": 100}
  })");
  return parse_manifest(j, std::string(refenc::source_dir()) + "/workloads/fake-reuse.json");
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
  Manifest plain =
      reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 40})", R"([{"kind": "cold"}])", 1 << 20);
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

  // summary.md and the page give the hit ratio next to the curve's prediction.
  std::ifstream md_in(dir + "/summary.md");
  const std::string md((std::istreambuf_iterator<char>(md_in)), std::istreambuf_iterator<char>());
  const std::string row = fmt::format("| {} | 800 | {} | {} | 450 | {:.1f}% | {:.1f}% |", cell.key.id(), r.distinct,
                                      r.working_set_bytes, 100 * r.hit_ratio(), 100 * r.predicted_hit_ratio);
  CHECK(md.find(row) != std::string::npos);
  CHECK(reuse_table(run).find(row) != std::string::npos);
  const std::string html = render_html_report(run, {});
  CHECK(html.find("id=\"reuse\"") != std::string::npos);
  CHECK(html.find(fmt::format("data-key=\"hit_ratio.{}\">{:.1f}%", cell.key.id(), 100 * r.hit_ratio())) !=
        std::string::npos);
  CHECK(html.find("miss-ratio curve (predicted)") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a replayed request trace sets each request's reference and arrival time") {
  const std::string dir = temp_dir("refenc-trace-replay");
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/requests-trace.jsonl";
  {
    // 300 requests, 2 ms apart, over 40 ids with a hot head: id = (i * i) mod 97 mod 40.
    std::ofstream out(trace);
    for (int i = 0; i < 300; ++i)
      out << json{{"t", 10.0 + 0.002 * i}, {"reference", "user-" + std::to_string((i * i) % 97 % 40)}}.dump() << "\n";
  }
  const std::string refs = R"({"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 40, "warmup": 0,
                               "trace": ")" +
                           trace + R"("})";
  Manifest m = reuse_manifest(refs, R"([{"kind": "cold", "concurrency": [1]}])", 300);
  REQUIRE(m.references.trace_lines.size() == 300);
  CHECK(m.phases[0].requests == 300);
  const int distinct = m.phases[0].distinct;
  CHECK(distinct == trace_distinct(m.references, 300));
  CHECK(distinct <= 40);

  const std::string out_dir = dir + "/run";
  RunRecord run = run_fake(m, out_dir);
  REQUIRE(run.cells.size() == 1);
  const Cell& cell = run.cells[0];
  CHECK(cell.open_loop);
  const auto& rows = run.requests_of(cell.key);
  REQUIRE(rows.size() == 300);
  std::map<std::string, std::string> id_to_reference;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].scheduled_s == Approx(0.002 * static_cast<double>(i)).margin(1e-6));
    const std::string id = m.references.trace_lines[i].reference;
    auto [it, fresh] = id_to_reference.try_emplace(id, rows[i].reference);
    CHECK(it->second == rows[i].reference);  // one id, one reference
  }
  CHECK(id_to_reference.size() == static_cast<std::size_t>(distinct));
  REQUIRE(cell.reuse);
  INFO("measured " << cell.reuse->hit_ratio() << " predicted " << cell.reuse->predicted_hit_ratio);
  CHECK(cell.reuse->hit_ratio() == Approx(cell.reuse->predicted_hit_ratio).margin(0.02));

  // Errors name the trace file and line, or the manifest field.
  {
    std::ofstream bad(dir + "/bad.jsonl");
    bad << R"({"t": 1, "reference": "a"})"
        << "\n"
        << R"({"t": 0.5, "reference": "b"})"
        << "\n";
  }
  CHECK_THROWS_WITH(
      reuse_manifest(R"({"clips": ["clips/en-m-16k.flac"], "variants": 4, "trace": ")" + dir + R"(/bad.jsonl"})",
                     R"([{"kind": "cold"}])", 300),
      Catch::Contains("bad.jsonl:2: t: must not go back in time"));
  CHECK_THROWS_WITH(reuse_manifest(refs, R"([{"kind": "cold", "distinct": 4}])", 300),
                    Catch::Contains("phases[0].distinct: set by the trace"));
  CHECK_THROWS_WITH(reuse_manifest(refs, R"([{"kind": "cold", "requests": 301}])", 300),
                    Catch::Contains("phases[0].requests: must be <= the trace's 300 lines"));
  const std::string zipf = R"({"clips": ["clips/en-m-16k.flac"], "variants": 40, "popularity": {"zipf": 1},
                               "trace": ")" +
                           trace + R"("})";
  CHECK_THROWS_WITH(reuse_manifest(zipf, R"([{"kind": "cold"}])", 300),
                    Catch::Contains("references.trace: a trace sets"));
  std::filesystem::remove_all(dir);
}
