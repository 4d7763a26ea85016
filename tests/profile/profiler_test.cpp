#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "fake_backend.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/verdict/gate.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

Manifest smoke_manifest() {
  json j = json::parse(R"({
    "schema_version": 1, "name": "fake-smoke", "seed": 7,
    "models": [{"name": "batcher", "synthesis": {"source": "test", "step_base_ms": 0.2, "prefill_base_ms": 0.2,
                                                  "steps_per_audio_second": 5}},
               {"name": "single", "synthesis": {"source": "test", "step_base_ms": 0.2, "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 10, "warmup": 2},
    "texts": ["Hello there.", "A second sentence."],
    "concurrency": [2, 4],
    "phases": [{"kind": "cold", "requests": 8}, {"kind": "warm", "requests": 12, "distinct": 4},
               {"kind": "warm-disk", "requests": 6, "distinct": 6}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 1}],
    "gate": {"bootstrap_resamples": 200}
  })");
  return parse_manifest(j, std::string(refenc::source_dir()) + "/workloads/fake-smoke.json");
}

std::string temp_dir() {
  auto p = std::filesystem::temp_directory_path() / ("refenc-profile-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

}  // namespace

TEST_CASE("a profile over fake hooks: counts per phase, skipped arms, a schema-valid report") {
  Manifest m = smoke_manifest();
  std::map<std::string, FakeBackend*> made;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    bool batch = spec.name == "batcher";
    auto b = std::make_unique<FakeBackend>(fake_info(spec.name, batch), batch);
    made[spec.name] = b.get();
    return b;
  };
  std::string dir = temp_dir();
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  const json rep = to_json(r.run);
  CHECK(rep["status"] == "complete");
  // batcher: 3 phases x 2 concurrencies x 2 arms; single: m4b skipped.
  CHECK(rep["cells"].size() == 12 + 6);
  REQUIRE(rep["skipped"].size() == 1);
  CHECK(rep["skipped"][0]["model"] == "single");
  CHECK(rep["skipped"][0]["reason"].get<std::string>().find("no safe batch primitive") != std::string::npos);
  for (const json& c : rep["cells"]) {
    INFO(c["id"]);
    CHECK(c["errors"] == 0);
    const json& cache = c["cache"];
    if (c["phase"] == "cold") {
      CHECK(cache["misses"] == 8);
      CHECK(cache["hits"] == 0);
      CHECK(c["outcomes"]["encoded"] == 8);
    } else if (c["phase"] == "warm") {
      CHECK(cache["hits"] == 12);
      CHECK(cache["misses"] == 0);
    } else {
      CHECK(cache["disk_hits"] == 6);
      CHECK(c["outcomes"]["disk_hit"] == 6);
    }
    CHECK(c["batching_active"] == (c["arm"] == "m4b"));
    // Every M4b cell carries parity: all of a cold cell's batched requests, none to check when warm.
    CHECK(c.contains("parity") == (c["arm"] == "m4b"));
    // Matched compute: M4b's batch workers are the encodes M4a runs at once (capped at the cores).
    int matched = std::min(c["concurrency"].get<int>(), static_cast<int>(std::max(1u, r.run.context.cores)));
    CHECK(c["compute"]["encode_threads"] == (c["arm"] == "m4b" ? matched : c["concurrency"].get<int>()));
    CHECK(c["compute"]["batch_workers"] == (c["arm"] == "m4b" ? matched : 0));
    CHECK(c["compute"]["device"] == "cpu");
    if (c["arm"] == "m4b") {
      CHECK(c["parity"]["checked"] == c["parity"]["batched"]);
      CHECK(c["parity"]["checked"] == (c["phase"] == "cold" ? 8 : 0));
      CHECK(c["parity"]["identical"] == c["parity"]["checked"]);
      CHECK(c["parity"]["sample"] == (c["phase"] == "cold" ? 0 : default_parity_sample));
    }
    CHECK(c["telemetry"]["cpu"]["available"] == true);
  }
  // Gate: the non-batching model is not applicable; the batching one gets a verdict with its grade.
  const json& gate = rep["gate"]["models"];
  CHECK(gate[1]["verdict"] == "NOT_APPLICABLE");
  CHECK(gate[0]["evidence_grade"] == "fake hook (tests)");
  std::string verdict = gate[0]["verdict"].get<std::string>();
  CHECK((verdict == "GO" || verdict == "NO-GO" || verdict == "INCONCLUSIVE"));

  // The folder: report.json valid against the schema, requests.jsonl with every request.
  auto errors = validate_report_file(dir);
  RunRecord run = load_run_with_requests(dir);
  for (const auto& e : errors) UNSCOPED_INFO(e);
  CHECK(errors.empty());
  std::size_t lines = 0;
  for (const auto& [id, recs] : run.requests) lines += recs.size();
  // Cells, then the A/A twins of m4a (the default): one per model, phase and concurrency.
  CHECK(lines == 2 * (8 + 12 + 6) * 2 + (8 + 12 + 6) * 2 + (8 + 12 + 6) * 2 * 2);
  CHECK(rep["aa_cells"].size() == 12);
  CHECK(run.aa_cells.size() == 12);
  for (const Cell& twin : run.aa_cells) {
    CHECK(twin.aa);
    CHECK(twin.key.arm == Arm::m4a);
    CHECK(run.aa_requests_of(twin.key).size() == twin.count);
    for (const RequestRecord& q : run.aa_requests_of(twin.key)) CHECK(q.aa);
  }
  // Every group with twins has its spread per metric (4 metrics x 12 groups), as recomputed from the folder.
  REQUIRE(run.noise);
  CHECK(run.noise->aa_spread.size() == 48);
  CHECK(std::filesystem::exists(dir + "/summary.md"));
  // Recomputing the gate from the written folder gives the same verdicts.
  GateReport again = evaluate_gate(run, run.gate_options());
  CHECK(to_json(again)["models"] == rep["gate"]["models"]);
  CHECK(to_json(run) == rep);

  // The validator catches a broken report and names the field.
  std::ifstream schema_in(std::string(refenc::source_dir()) + "/reports/report.schema.json");
  json schema = json::parse(schema_in);
  json broken = rep;
  broken["cells"][0]["stages"]["e2e"]["p95"] = "fast";
  broken["cells"][1].erase("count");
  errors = validate_schema(schema, broken);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "cells[0].stages.e2e.p95: expected number, got string");
  CHECK(errors[1] == "cells[1]: missing required field 'count'");
  std::filesystem::remove_all(dir);
}

TEST_CASE("the library context names the malloc; reports without it, or with retired fields, still load") {
  RunRecord run;
  run.context.libtorch = LibraryContext{.version = "1.13.0", .blas = "open", .blas_threads = 1, .allocator = "glibc"};
  json report = to_json(run);
  CHECK(report["context"]["libtorch"]["allocator"] == "glibc");
  RunRecord back = run_from_json(report, "report.json");
  REQUIRE(back.context.libtorch);
  CHECK(back.context.libtorch->allocator == "glibc");
  CHECK(summary_markdown(back).find("- LibTorch 1.13.0, BLAS open (1 thread), malloc glibc\n") != std::string::npos);

  report["context"]["libtorch"].erase("allocator");
  report["context"]["libtorch"]["retired_bytes"] = std::uint64_t{4} << 30;  // a field no longer written: ignored
  RunRecord old = run_from_json(report, "old/report.json");
  REQUIRE(old.context.libtorch);
  CHECK(old.context.libtorch->allocator.empty());
  CHECK_FALSE(to_json(old)["context"]["libtorch"].contains("allocator"));
  CHECK_FALSE(to_json(old)["context"]["libtorch"].contains("retired_bytes"));
  CHECK(summary_markdown(old).find("malloc") == std::string::npos);
}

TEST_CASE("a batch path that changes one code of one item makes the gate refuse GO and say why") {
  Manifest m = smoke_manifest();
  m.models.resize(1);
  m.phases.resize(1);  // cold
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    auto b = std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
    b->hook->perturb = "en-m-16k#0|";  // one measured reference, batched in each M4b cell
    return b;
  };
  std::string dir = temp_dir() + "-parity";
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  const ModelVerdict& v = r.run.gate->models.at(0);
  CHECK(v.verdict == Verdict::no_go);
  CHECK(v.reason.find("parity fails: 2 of 16 checked batched artifacts differ") == 0);
  CHECK(v.parity == v.reason.substr(0, v.parity.size()));
  std::size_t flagged = 0;
  for (const auto& [id, recs] : r.run.requests)
    for (const RequestRecord& q : recs) flagged += q.parity == "mismatched" ? 1 : 0;
  CHECK(flagged == 2);  // one per M4b cell (concurrency 2 and 4)
  // The written folder says the same, and the gate recomputed from it agrees.
  RunRecord run = load_run_with_requests(dir);
  CHECK(evaluate_gate(run, run.gate_options()).models.at(0).reason == v.reason);
  // summary.md and the HTML page say it too, per cell.
  CHECK(summary_markdown(run).find("batcher/m4b/cold/c2/r0: 8 of 8 batched checked: 7 identical, 0 within tolerance 0, "
                                   "1 mismatched") != std::string::npos);
  const std::string page = render_html_report(run);
  CHECK(page.find("data-key=\"parity.batcher/m4b/cold/c2/r0\">1 of 8 differ from single encodes<") !=
        std::string::npos);
  CHECK(page.find("parity fails: 2 of 16") != std::string::npos);
  CHECK(validate_report_file(dir).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("matched compute: one batch worker per device stream on a GPU, M4a's encodes on the CPU") {
  CHECK(matched_batch_workers(8, "cuda:0", 16) == 1);
  CHECK(matched_batch_workers(8, "cpu", 16) == 8);
  CHECK(matched_batch_workers(16, "cpu", 2) == 2);
  CHECK(matched_batch_workers(1, "cpu", 0) == 1);
}

TEST_CASE("by default each cell warms up with as many requests as its concurrency") {
  Manifest m = smoke_manifest();
  m.models.resize(1);
  m.phases.resize(1);  // cold: 8 distinct references
  m.phases[0].concurrency = {3};
  m.arms.resize(1);                          // m4a
  m.references.warmup = warmup_concurrency;  // 10 variants: 2 beyond the measured 8
  m.noise.aa_arms.clear();                   // no A/A twin: one cell's requests only
  std::shared_ptr<FakeHook> hook;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    auto b = std::make_unique<FakeBackend>(fake_info(spec.name, false), false);
    hook = b->hook;
    return b;
  };
  std::string dir = temp_dir() + "-warmup";
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  REQUIRE(hook);
  REQUIRE(r.run.cells.size() == 1);
  CHECK(hook->keyed == 8 + 3);        // 3 warmup requests ...
  CHECK(hook->encodes == 8 + 3 + 2);  // ... over the 2 spare references, after 3 priming calls (one per
                                      // worker, outside the service: never keyed)
  std::filesystem::remove_all(dir);
}

TEST_CASE("a stop request writes a partial report marked interrupted") {
  Manifest m = smoke_manifest();
  std::atomic<bool> stop{false};
  int made = 0;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    if (++made == 2) stop = true;  // the second model is never profiled
    return std::make_unique<FakeBackend>(fake_info(spec.name, true), true);
  };
  std::string dir = temp_dir() + "-stop";
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .stop = &stop, .sleep_synthesis = false});
  CHECK(r.interrupted);
  CHECK(r.run.status == "interrupted");
  CHECK(r.run.cells.size() == 12);
  CHECK(validate_report(r.run).empty());
  CHECK(validate_report_file(dir).empty());
  std::filesystem::remove_all(dir);
}
