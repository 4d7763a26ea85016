#include <catch2/catch.hpp>

#include <filesystem>

#include "core/error.hpp"
#include "manifest_error.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/manifest/reference_set.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using nlohmann::json;

namespace {

const std::string kManifestPath = std::string(refenc::source_dir()) + "/workloads/test.json";

json valid() {
  return json::parse(R"({
    "schema_version": 1, "name": "t", "seed": 3,
    "models": [{"name": "fake", "encoder": {"scale": "tiny"}, "synthesis": {"source": "test numbers"}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/de-m-24k.flac"], "variants": 8, "warmup": 2},
    "texts": ["hello there"],
    "phases": [{"kind": "cold", "requests": 4}, {"kind": "warm", "concurrency": [2], "requests": 6, "distinct": 3}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 4, "max_batch_wait_ms": 2}]
  })");
}

std::string error_of(const json& j) { return testing::manifest_error(j, kManifestPath); }

}  // namespace

TEST_CASE("a valid manifest parses with defaults") {
  Manifest m = parse_manifest(valid(), kManifestPath);
  CHECK(m.name == "t");
  CHECK(m.seed == 3);
  REQUIRE(m.phases.size() == 2);
  CHECK(m.phases[0].concurrency == std::vector<int>{8, 16});
  CHECK(m.phases[0].distinct == 4);
  CHECK(m.phases[1].concurrency == std::vector<int>{2});
  CHECK(m.arms[1].max_batch_size == 4);
  CHECK_FALSE(m.arrivals.open_loop);
  CHECK(m.gate.latency_reduction == Approx(0.15));
  CHECK(m.measured_references() == 4);
  CHECK(std::filesystem::exists(m.references.clips[0]));
}

TEST_CASE("manifest errors name the file and the field") {
  auto j = valid();
  j["phases"][1]["concurrency"][0] = 0;
  CHECK(error_of(j) == kManifestPath + ": phases[1].concurrency[0]: must be >= 1");
  j = valid();
  j.erase("models");
  CHECK(error_of(j) == kManifestPath + ": models: required");
  j = valid();
  j["arms"][1]["name"] = "m5";
  CHECK(error_of(j).find("arms[1].name: must be m4a or m4b") != std::string::npos);
  j = valid();
  j["arms"][1]["max_batch_size"] = 1;
  CHECK(error_of(j).find("arms[1].max_batch_size: must be >= 2") != std::string::npos);
  j = valid();
  j["models"][0]["synthesis"].erase("source");
  CHECK(error_of(j).find("models[0].synthesis.source: required") != std::string::npos);
  j = valid();
  j["colour"] = "blue";
  CHECK(error_of(j).find("colour: unknown field") != std::string::npos);
  j = valid();
  j["references"]["variants"] = 3;
  CHECK(error_of(j).find("references.variants: must provide at least 6 references") != std::string::npos);
  j = valid();
  j["references"]["clips"][1] = "clips/none.flac";
  CHECK(error_of(j).find("references.clips[1]: no such file") != std::string::npos);
  j = valid();
  j["phases"][0]["kind"] = "tepid";
  CHECK(error_of(j).find("phases[0].kind: must be cold, warm, warm-disk or warm-shared") != std::string::npos);
  j = valid();
  j["arrivals"] = {{"mode", "open"}};
  CHECK(error_of(j).find("arrivals.rate_per_s: required") != std::string::npos);
  j = valid();
  j["phases"][1]["distinct"] = 7;
  CHECK(error_of(j).find("phases[1].distinct: must be <= requests") != std::string::npos);
  j = valid();
  j["texts"] = json::array();
  CHECK(error_of(j).find("texts: must not be empty") != std::string::npos);
  CHECK_THROWS_WITH(load_manifest("/nonexistent/m.json"), Catch::Contains("cannot open manifest"));
}

TEST_CASE("the shipped manifests are valid") {
  for (const char* name : {"smoke", "fish-s2-pro", "qwen3-tts", "moss-tts-local", "nightly", "reuse-zipf"}) {
    INFO(name);
    Manifest m = load_manifest(std::string(refenc::source_dir()) + "/workloads/" + name + ".json");
    CHECK(m.sha256.size() == 64);
    CHECK_FALSE(m.models.empty());
  }
}

TEST_CASE("reference variants are distinct, deterministic and keep the clip's length") {
  ReferenceSpec spec;
  spec.clips = {std::string(refenc::source_dir()) + "/workloads/clips/en-m-16k.flac"};
  spec.variants = 3;
  auto a = make_reference_set(spec, 9);
  auto b = make_reference_set(spec, 9);
  REQUIRE(a.size() == 3);
  CHECK(*a[0].wav == *b[0].wav);
  CHECK(*a[0].wav != *a[1].wav);
  CHECK(*a[1].wav != *a[2].wav);
  CHECK(a[0].seconds == Approx(4.0).margin(0.01));
  CHECK(a[0].sample_rate == 16000);
  CHECK(a[0].wav->substr(0, 4) == "RIFF");
  spec.variants = 0;
  auto paths = make_reference_set(spec, 9);
  REQUIRE(paths.size() == 1);
  CHECK_FALSE(paths[0].path.empty());
}

TEST_CASE("m4b arm options: batch workers, length grouping, cache_batched, parity sample") {
  auto j = valid();
  Manifest m = parse_manifest(j, kManifestPath);
  CHECK(m.arms[1].batch_workers == 0);  // matched compute
  CHECK(m.arms[1].group_by_length.mode == refenc::BatchGrouping::Mode::none);
  CHECK(m.arms[1].cache_batched);
  CHECK(m.arms[1].parity_sample == default_parity_sample);
  CHECK(m.models[0].encoder.parity_tolerance == 0);
  j["arms"][1]["batch_workers"] = 3;
  j["arms"][1]["group_by_length"] = 0.25;
  j["arms"][1]["cache_batched"] = false;
  j["models"][0]["encoder"]["parity_tolerance"] = 1e-4;
  m = parse_manifest(j, kManifestPath);
  CHECK(m.arms[1].batch_workers == 3);
  CHECK(m.arms[1].group_by_length.mode == refenc::BatchGrouping::Mode::max_padding_waste);
  CHECK(m.arms[1].group_by_length.max_padding_waste == Approx(0.25));
  CHECK_FALSE(m.arms[1].cache_batched);
  CHECK(m.models[0].encoder.parity_tolerance == Approx(1e-4));
  j["arms"][1]["group_by_length"] = "exact";
  CHECK(parse_manifest(j, kManifestPath).arms[1].group_by_length.mode == refenc::BatchGrouping::Mode::exact);
  j["arms"][1]["group_by_length"] = "bucket";
  CHECK(error_of(j) == kManifestPath + ": arms[1].group_by_length: must be \"exact\" or a padded fraction in [0, 1]");
  j = valid();
  j["arms"][0]["batch_workers"] = 2;
  CHECK(error_of(j) == kManifestPath + ": arms[0]: m4a takes no batch options");
}

TEST_CASE("warmup defaults to the cell's concurrency, over the references beyond the measured ones") {
  auto j = valid();
  Manifest m = parse_manifest(j, kManifestPath);
  CHECK(m.warmup_requests(8) == 2);  // set explicitly
  CHECK(m.warmup_references() == 2);
  j["references"].erase("warmup");
  m = parse_manifest(j, kManifestPath);
  CHECK(m.references.warmup == warmup_concurrency);
  CHECK(m.warmup_requests(8) == 8);
  CHECK(m.warmup_requests(16) == 16);
  CHECK(m.warmup_references() == 8 - 4);  // 8 variants, 4 measured; the largest concurrency is 16
  j["references"]["variants"] = 5;        // 4 measured + 2 needed
  CHECK(error_of(j) == kManifestPath +
                           ": references.variants: must provide at least 6 references (largest phase "
                           "distinct + warmup + never-seen requests), got 5");
}

TEST_CASE("a Python hook encoder: module:factory, its folders and keyword arguments") {
  json j = valid();
  j["models"][0]["encoder"] = {{"python", "my_hooks.codec:make_hook"},
                               {"python_path", {"clips", "."}},
                               {"python_args", {{"module", "codec.pt"}, {"batch", 4}}}};
  Manifest m = parse_manifest(j, kManifestPath);
  const EncoderSpec& e = m.models[0].encoder;
  CHECK(e.python == "my_hooks.codec:make_hook");
  const std::filesystem::path workloads = std::filesystem::path(refenc::source_dir()) / "workloads";
  CHECK(e.python_path == std::vector<std::string>{(workloads / "clips").string(), (workloads / "").string()});
  CHECK(json::parse(e.python_args) == json{{"module", "codec.pt"}, {"batch", 4}});

  auto with = [&](json encoder) {
    json k = valid();
    k["models"][0]["encoder"] = std::move(encoder);
    return error_of(k);
  };
  CHECK_THAT(with({{"python", "my_hooks"}}),
             Catch::Contains("models[0].encoder.python") && Catch::Contains("is not \"module:factory\""));
  CHECK_THAT(with({{"python", "a:b"}, {"module", "x.pt"}}), Catch::Contains("models[0].encoder.module"));
  CHECK_THAT(with({{"python", "a:b"}, {"device", "cuda:0"}}), Catch::Contains("models[0].encoder.device"));
  CHECK_THAT(with({{"python", "a:b"}, {"python_path", {"no-such-folder"}}}),
             Catch::Contains("models[0].encoder.python_path[0]") && Catch::Contains("is not a folder"));
  CHECK_THAT(with({{"python", "a:b"}, {"python_args", {1, 2}}}),
             Catch::Contains("models[0].encoder.python_args: must be an object"));
  CHECK_THAT(with({{"python_args", json::object()}}), Catch::Contains("models[0].encoder.python_args: needs \"python\""));
}
