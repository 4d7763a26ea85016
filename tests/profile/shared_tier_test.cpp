// The warm-shared phase and the manifest's cache.shared: parsing (good and bad values, one-line
// errors), the profiler's private redis-server (up during the run, stopped after it, also when the
// run fails), replica A filling a shared tier and replica B measured over it, and how the report,
// the text summary and the HTML page show shared hits.
//
// The tier here is a fake shared by the services of one cell prefix (this suite links neither the
// store nor hiredis); tests/cli/profile_shared.sh runs the same phase through the real Redis tier.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "core/error.hpp"
#include "fake_backend.hpp"
#include "manifest_error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/record/schema_validator.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/shared_tier_text.hpp"
#include "profile/render/text_report.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/orchestration/shared_tier_server.hpp"
#include "util/local_redis_server.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using nlohmann::json;

namespace {

const std::string kPath = std::string(refenc::source_dir()) + "/workloads/shared-test.json";

json shared_manifest() {
  return json::parse(R"({
    "schema_version": 1, "name": "fake-shared", "seed": 5,
    "models": [{"name": "fake", "synthesis": {"source": "test", "step_base_ms": 0.2, "steps_per_audio_second": 5}}],
    "references": {"clips": ["clips/en-m-16k.flac", "clips/es-m-48k.flac"], "variants": 10, "warmup": 2},
    "texts": ["Hello there."],
    "concurrency": [2],
    "phases": [{"kind": "cold", "requests": 4}, {"kind": "warm-shared", "requests": 6, "distinct": 6}],
    "arms": [{"name": "m4a"}, {"name": "m4b", "max_batch_size": 2, "max_batch_wait_ms": 1}],
    "aa": [],
    "gate": {"bootstrap_resamples": 200},
    "cache": {"shared": "local"}
  })");
}

std::string shared_error_of(const json& j) { return testing::manifest_error(j, kPath); }

/// A stand-in for the Redis tier: one store per key prefix, shared by every service of that prefix;
/// counts shared hits and misses and answers lookups as shared.
struct FakeSharedStore {
  std::mutex m;
  std::map<std::string, std::map<std::string, std::string>> by_prefix;
};

struct FakeSharedTier : refenc::SecondTier<std::string> {
  FakeSharedTier(std::shared_ptr<FakeSharedStore> s, std::string p) : store_(std::move(s)), prefix_(std::move(p)) {}
  std::shared_ptr<const std::string> load(const refenc::ReferenceEncodeKey& key) noexcept override {
    std::lock_guard lock(store_->m);
    auto& entries = store_->by_prefix[prefix_];
    auto it = entries.find(key.digest());
    if (it == entries.end()) {
      ++counters.shared_misses;
      return nullptr;
    }
    ++counters.shared_hits;
    return std::make_shared<const std::string>(it->second);
  }
  void store(const refenc::ReferenceEncodeKey& key, const std::string& s) noexcept override {
    std::lock_guard lock(store_->m);
    store_->by_prefix[prefix_][key.digest()] = s;
    ++counters.shared_writes;
  }
  refenc::TierLookup<std::string> load_or_lead(const refenc::ReferenceEncodeKey& key,
                                               std::chrono::milliseconds) noexcept override {
    auto found = load(key);
    const bool shared = found != nullptr;
    return {std::move(found), nullptr, shared};
  }
  refenc::TierStats stats() const override {
    std::lock_guard lock(store_->m);
    return counters;
  }
  refenc::TierStats counters;

 private:
  std::shared_ptr<FakeSharedStore> store_;
  std::string prefix_;
};

/// What the backend saw of one service it made for a warm-shared cell.
struct SharedService {
  std::string url, prefix, tier_root;
  bool server_answered = false;
};

/// FakeBackend whose warm-shared services read the fake shared tier of their prefix (and no disk
/// tier: replica B's disk folder is empty anyway), recording what the profiler passed.
class SharedFakeBackend : public FakeBackend {
 public:
  SharedFakeBackend(ModelEntry info, std::shared_ptr<FakeSharedStore> s, std::vector<SharedService>& seen)
      : FakeBackend(std::move(info), true), store_(std::move(s)), seen_(seen) {}
  std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                              const std::string& tier_root) override {
    if (cache.shared_url.empty()) return FakeBackend::make_service(arm, cache, tier_root);
    SharedService s{cache.shared_url, cache.shared_prefix, tier_root, false};
    const std::string loopback = "redis://127.0.0.1:";
    if (s.url.rfind(loopback, 0) == 0)
      s.server_answered = refenc::loopback_port_answers(std::stoi(s.url.substr(loopback.size())));
    seen_.push_back(s);
    const refenc::ServiceOptions o = service_options(arm, cache);
    auto tier = std::make_shared<FakeSharedTier>(store_, cache.shared_prefix);
    last_service = std::make_shared<FakeService>(hook, o, tier);
    return make_service_handle(last_service, fake_raw);
  }

 private:
  std::shared_ptr<FakeSharedStore> store_;
  std::vector<SharedService>& seen_;
};

std::string shared_temp_dir(const std::string& tag) {
  auto p = std::filesystem::temp_directory_path() / ("refenc-shared-test-" + std::to_string(::getpid()) + tag);
  std::filesystem::remove_all(p);
  return p.string();
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

}  // namespace

TEST_CASE("cache.shared: local or a redis:// URL without a password, only with a warm-shared phase") {
  Manifest m = parse_manifest(shared_manifest(), kPath);
  CHECK(m.cache.shared == "local");
  CHECK(m.phases[1].kind == Phase::warm_shared);
  CHECK(m.cache.shared_url.empty());  // set by the profiler per cell, never by the manifest
  json j = shared_manifest();
  j["cache"]["shared"] = "redis://127.0.0.1:6390/2";
  CHECK(parse_manifest(j, kPath).cache.shared == "redis://127.0.0.1:6390/2");
  j["cache"]["shared"] = "redis://cache@10.0.0.5";  // a user, the password from the environment
  CHECK(parse_manifest(j, kPath).cache.shared == "redis://cache@10.0.0.5");

  j["cache"]["shared"] = "remote";
  CHECK(shared_error_of(j) == kPath +
                           ": cache.shared: must be \"local\" or a redis://[user@]host[:port][/db] URL (got "
                           "'remote')");
  j["cache"]["shared"] = "redis://cache:s3cret@10.0.0.5";
  std::string e = shared_error_of(j);
  CHECK(e == kPath +
                 ": cache.shared: no password in a manifest (report.json copies it): set "
                 "$REFENC_SHARED_CACHE_PASSWORD instead");
  CHECK(e.find("s3cret") == std::string::npos);
  j["cache"]["shared"] = "redis://";
  CHECK(shared_error_of(j) == kPath + ": cache.shared: the URL names no host");
  j["cache"]["shared"] = "";
  CHECK(shared_error_of(j) == kPath + ": cache.shared: must not be empty");
  j["cache"]["shared"] = 6379;
  CHECK(shared_error_of(j) == kPath + ": cache.shared: must be a string");
  j = shared_manifest();
  j["cache"].erase("shared");
  CHECK(shared_error_of(j) == kPath +
                           ": cache.shared: required by the warm-shared phase: \"local\" (a private "
                           "redis-server on loopback) or a redis:// URL");
  j = shared_manifest();
  j["phases"].erase(1);
  CHECK(shared_error_of(j) ==
        kPath + ": cache.shared: only a warm-shared phase uses the shared tier: add one or leave cache.shared out");
  j = shared_manifest();
  j["phases"].push_back({{"kind", "warm-shared"}});
  CHECK(shared_error_of(j) == kPath + ": phases[2].kind: duplicate phase 'warm-shared'");
  j = shared_manifest();
  j["phases"][1]["kind"] = "warm-fleet";
  CHECK(shared_error_of(j).find("phases[1].kind: must be cold, warm, warm-disk or warm-shared (got 'warm-fleet')") !=
        std::string::npos);
}

TEST_CASE("SharedTierServer: no server without cache.shared, a URL as given, a prefix per cell") {
  CacheSpec none;
  SharedTierServer off(none, "");
  CHECK_FALSE(off.active());
  CHECK(off.description().empty());
  CacheSpec remote;
  remote.shared = "redis://10.0.0.5:6380";
  SharedTierServer given(remote, "");
  CHECK(given.active());
  CHECK(given.local_port() == 0);
  CHECK(given.url() == "redis://10.0.0.5:6380");
  CacheSpec c1 = given.for_cell(remote, 1), c2 = given.for_cell(remote, 2);
  CHECK(c1.shared_url == "redis://10.0.0.5:6380");
  CHECK(c1.shared_prefix != c2.shared_prefix);
  CHECK(c1.shared_prefix.rfind("refenc-profile-", 0) == 0);
  CHECK(c1.shared_prefix.size() <= 64);
  CHECK(c1.shared_prefix.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
        std::string::npos);
}

TEST_CASE("warm-shared: replica B's requests are shared hits, nothing encoded; the private server stops") {
  if (!refenc::redis_server_available()) {
    WARN("redis-server not installed: skipped (scripts/setup.sh installs it)");
    return;
  }
  Manifest m = parse_manifest(shared_manifest(), kPath);
  auto store = std::make_shared<FakeSharedStore>();
  std::vector<SharedService> seen;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    return std::make_unique<SharedFakeBackend>(fake_info(spec.name, true), store, seen);
  };
  std::string dir = shared_temp_dir("-run");
  ProfileResult r = run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false});
  // Two warm-shared cells (m4a, m4b) x two replicas, each pair on one prefix, over the private server.
  REQUIRE(seen.size() == 4);
  CHECK(seen[0].prefix == seen[1].prefix);
  CHECK(seen[2].prefix == seen[3].prefix);
  CHECK(seen[0].prefix != seen[2].prefix);
  CHECK(seen[0].tier_root != seen[1].tier_root);  // replica B has a disk folder of its own
  for (const SharedService& s : seen) {
    CHECK(s.url.rfind("redis://127.0.0.1:", 0) == 0);
    CHECK(s.server_answered);
  }
  CHECK_FALSE(refenc::loopback_port_answers(port_of(seen[0].url)));  // stopped with the run
  CHECK(r.run.context.shared_cache.find("local redis-server on 127.0.0.1:" + std::to_string(port_of(seen[0].url))) ==
        0);

  const json rep = to_json(r.run);
  std::size_t shared_cells = 0;
  for (const json& c : rep["cells"]) {
    if (c["phase"] != "warm-shared") continue;
    INFO(c["id"]);
    ++shared_cells;
    CHECK(c["outcomes"]["shared_hit"] == 6);
    CHECK(c["outcomes"].size() == 1);
    CHECK(c["cache"]["shared_hits"] == 6);
    CHECK(c["cache"]["shared_misses"] == 0);
    CHECK(c["cache"]["shared_errors"] == 0);
    CHECK(c["cache"]["shared_lease_waits"] == 0);
    CHECK(c["cache"]["shared_lease_takeovers"] == 0);
    CHECK(c["cache"]["misses"] == 6);  // memory misses, all answered by the shared tier
    CHECK(c["outcomes"].count("encoded") == 0);
    CHECK(c["warnings"].size() == 1);  // only the tail-percentile note: no shared-tier warning
  }
  CHECK(shared_cells == 2);
  // requests.jsonl: each of replica B's requests says it came from the shared tier.
  RunRecord run = load_run_with_requests(dir);
  for (const Cell& c : run.cells) {
    if (c.key.phase != Phase::warm_shared) continue;
    REQUIRE(run.requests_of(c.key).size() == 6);
    for (const RequestRecord& q : run.requests_of(c.key)) {
      CHECK(q.outcome == "shared_hit");
      REQUIRE(c.compute);  // each row carries its arm's compute
      CHECK(q.batch_workers == c.compute->batch_workers);
      CHECK(q.intra_op_threads == c.compute->intra_op_threads);
    }
    CHECK(shared_hit_share(c) == 1.0);
    CHECK(hit_requests(c) == 6);
    CHECK(c.telemetry.gpu.encodes == 0);  // misses - disk_hits - shared_hits + uncacheable
  }
  for (const Cell& c : r.run.cells)
    if (c.key.phase == Phase::cold) CHECK(c.telemetry.gpu.encodes == 4);
  CHECK(run.context.shared_cache == r.run.context.shared_cache);
  CHECK(validate_report_file(dir).empty());
  // The gate reads cold cells only: warm-shared cells change no verdict.
  CHECK(rep["gate"]["models"][0]["concurrency"].size() == 1);

  // Text summary and summary.md: shared hits count as hits, and are shown apart.
  const std::string table = summary_table(r.run);
  CHECK(table.find("hit% = hit + disk_hit + shared_hit + merged") != std::string::npos);
  CHECK(table.find("fake/m4a/warm-shared/c2/r0") != std::string::npos);
  CHECK(table.find("from shared 6 of 6 (100%), memory 0, disk 0, encoded 0, merged 0 | shared hits 6, misses 0, "
                   "errors 0, lease waits 0, takeovers 0") != std::string::npos);
  CHECK(summary_markdown(r.run).find("Shared tier (warm-shared") != std::string::npos);
  // The HTML page: a shared_hits column in the cache counters.
  const std::string html = render_html_report(run);
  CHECK(html.find("<th class=\"n\">shared_hits</th>") != std::string::npos);
  CHECK(html.find("data-key=\"cache.fake/m4a/warm-shared.shared_hits\">6<") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the private server is stopped when the run fails") {
  if (!refenc::redis_server_available()) {
    WARN("redis-server not installed: skipped");
    return;
  }
  json j = shared_manifest();
  j["models"].push_back({{"name", "broken"}, {"synthesis", {{"source", "test"}}}});
  Manifest m = parse_manifest(j, kPath);
  auto store = std::make_shared<FakeSharedStore>();
  std::vector<SharedService> seen;
  BackendFactory factory = [&](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    if (spec.name == "broken") throw refenc::Error(refenc::ErrorKind::config, "broken: no such model");
    return std::make_unique<SharedFakeBackend>(fake_info(spec.name, true), store, seen);
  };
  std::string dir = shared_temp_dir("-fail");
  CHECK_THROWS_WITH(run_profile(m, factory, {.out_dir = dir, .sleep_synthesis = false}), "broken: no such model");
  REQUIRE_FALSE(seen.empty());
  CHECK(seen[0].server_answered);
  CHECK_FALSE(refenc::loopback_port_answers(port_of(seen[0].url)));
  std::filesystem::remove_all(dir);
}

TEST_CASE("LocalRedisServer: loopback only, answers while it runs, nothing listens after kill_now") {
  if (!refenc::redis_server_available()) {
    WARN("redis-server not installed: skipped");
    return;
  }
  std::string folder;
  int port = 0;
  {
    refenc::LocalRedisServer redis({"--maxmemory", "8mb"});
    port = redis.port();
    folder = redis.dir();
    CHECK(redis.url() == "redis://127.0.0.1:" + std::to_string(port));
    CHECK(refenc::loopback_port_answers(port));
    CHECK(std::filesystem::is_directory(folder));
    redis.kill_now();
    CHECK(redis.pid() == -1);
    CHECK_FALSE(refenc::loopback_port_answers(port));
    redis.start();  // back on the same port, empty
    CHECK(refenc::loopback_port_answers(port));
  }
  CHECK_FALSE(refenc::loopback_port_answers(port));
  CHECK_FALSE(std::filesystem::exists(folder));
  // A server that cannot start is one error naming why, and leaves no folder behind.
  CHECK_THROWS_WITH(refenc::LocalRedisServer({"--no-such-option", "x"}), Catch::Contains("exited at start"));
}

TEST_CASE("request rows of runs written before compute was recorded read as not recorded") {
  RunRecord base = load_run_with_requests(std::string(refenc::source_dir()) + "/reports/baseline");
  REQUIRE_FALSE(base.requests.empty());
  const RequestRecord& q = base.requests.begin()->second.at(0);
  CHECK(q.batch_workers == -1);
  CHECK(to_json(q).count("compute") == 0);
  CHECK(base.context.shared_cache.empty());
}

TEST_CASE("without a Redis server on PATH a local shared tier is one error naming the manifest field") {
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", "/nonexistent-refenc-test", 1);
  CacheSpec cache;
  cache.shared = "local";
  std::string error;
  try {
    SharedTierServer server(cache, "", "x.json: cache.shared");
  } catch (const refenc::Error& e) {
    CHECK(e.kind() == refenc::ErrorKind::config);
    error = e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  CHECK(error ==
        "x.json: cache.shared: \"local\": redis-server: not found on PATH (Debian: apt-get install redis-tools, "
        "or redis-server)");
}
