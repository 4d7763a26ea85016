#include <catch2/catch.hpp>

#include <thread>

#include "fake_backend.hpp"
#include "profile/orchestration/cell_metrics.hpp"
#include "profile/orchestration/runner.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;
using refenc::ServiceStats;

namespace {

std::vector<ReferenceItem> refs(int n, const std::string& prefix = "ref") {
  std::vector<ReferenceItem> out;
  for (int i = 0; i < n; ++i) out.push_back({prefix + std::to_string(i), "", nullptr, 2.0, 24000});
  return out;
}

std::vector<WorkItem> items(const std::vector<ReferenceItem>& r, int requests) {
  std::vector<WorkItem> out;
  for (int i = 0; i < requests; ++i)
    out.push_back({static_cast<std::size_t>(i), &r[static_cast<std::size_t>(i) % r.size()], "text", "transcript"});
  return out;
}

SynthesisSpec quick_synth() {
  SynthesisSpec s;
  s.source = "test";
  s.step_base_ms = 0.1;
  s.prefill_base_ms = 0.1;
  s.steps_per_audio_second = 5;
  return s;
}

}  // namespace

TEST_CASE("cold: misses equal distinct references; warm: hits equal requests") {
  FakeBackend backend(fake_info("fake", false), false);
  auto service = backend.make_service({}, {}, "");
  auto r = refs(12);
  auto cold = items(r, 12);
  ServiceStats before = service->stats();
  SynthesisModel synth(quick_synth(), false);
  RunResult run = run_requests(*service, cold, {.concurrency = 4}, &synth, 12.5);
  ServiceStats delta = service->stats().minus(before);
  CHECK(run.records.size() == 12);
  CHECK(delta.misses == 12);
  CHECK(delta.hits == 0);
  for (const auto& rec : run.records) {
    CHECK(rec.outcome == "encoded");
    CHECK(rec.e2e_s >= rec.ttfa_s);
    CHECK(rec.ttfa_s >= rec.preprocessing_s + rec.encode_s);
    CHECK(rec.text_tokens == 1);
  }
  auto warm = items(r, 30);
  before = service->stats();
  run = run_requests(*service, warm, {.concurrency = 8}, &synth, 12.5);
  delta = service->stats().minus(before);
  CHECK(delta.hits == 30);
  CHECK(delta.misses == 0);
  for (const auto& rec : run.records) CHECK(rec.outcome == "hit");
  CHECK_FALSE(run.generator_behind);
}

TEST_CASE("merged is counted when a reference repeats inside the in-flight window") {
  FakeBackend backend(fake_info("fake", false), false);
  std::atomic<bool> hold{true};
  backend.hook->hold = &hold;
  auto service = backend.make_service({}, {}, "");
  auto r = refs(1);
  auto same = items(r, 8);
  std::thread releaser([&] {
    // The leader is held inside encode_one until the other seven have joined it as followers.
    while (service->stats().merged < 7) std::this_thread::yield();
    hold = false;
  });
  RunResult run = run_requests(*service, same, {.concurrency = 8}, nullptr, 12.5);
  releaser.join();
  auto s = service->stats();
  CHECK(s.misses == 1);
  CHECK(s.merged == 7);
  int merged = 0, encoded = 0;
  for (const auto& rec : run.records) {
    merged += rec.outcome == "merged";
    encoded += rec.outcome == "encoded";
  }
  CHECK(merged == 7);
  CHECK(encoded == 1);
  CHECK(backend.hook->encodes == 1);
}

TEST_CASE("a failed request is recorded and the run goes on") {
  FakeBackend backend(fake_info("fake", false), false);
  auto service = backend.make_service({}, {}, "");
  std::vector<ReferenceItem> r = refs(3);
  r[1].id = "fail:me";
  auto work = items(r, 3);
  RunResult run = run_requests(*service, work, {.concurrency = 1}, nullptr, 12.5);
  REQUIRE(run.records.size() == 3);
  CHECK(run.records[1].outcome == "failed");
  CHECK(run.records[1].error.find("fake encoder refuses") != std::string::npos);
  CHECK(run.records[2].outcome == "encoded");
  Cell cell = make_cell({"fake", Arm::m4a, Phase::cold, 1, 0}, run, service->stats(), {}, false, false);
  CHECK(cell.errors == 1);
  CHECK(cell.stage(Stage::e2e).count == 2);
  CHECK(cell.outcomes.at("failed") == 1);
}

TEST_CASE("uncacheable requests bypass the cache") {
  FakeBackend backend(fake_info("fake", false), false);
  auto service = backend.make_service({}, {}, "");
  std::vector<ReferenceItem> r = refs(1, "nokey:");
  RunResult run = run_requests(*service, items(r, 4), {.concurrency = 2}, nullptr, 12.5);
  for (const auto& rec : run.records) CHECK(rec.outcome == "uncacheable");
  CHECK(service->stats().uncacheable == 4);
}

TEST_CASE("open loop: latency counts from the scheduled send and a late generator is flagged") {
  FakeBackend backend(fake_info("fake", false), false);
  std::atomic<bool> hold{true};
  backend.hook->hold = &hold;
  auto service = backend.make_service({}, {}, "");
  auto r = refs(6);
  std::thread releaser([&] {
    // One worker, held on its first request while the schedule (1000/s) runs ahead of it.
    while (service->stats().misses < 1) std::this_thread::yield();
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    while (std::chrono::steady_clock::now() < until) std::this_thread::yield();
    hold = false;
  });
  RunResult run = run_requests(*service, items(r, 6),
                               {.concurrency = 1, .open_loop = true, .rate_per_s = 1000, .seed = 4}, nullptr, 12.5);
  releaser.join();
  REQUIRE(run.records.size() == 6);
  CHECK(run.generator_behind);
  CHECK(run.late >= 1);
  for (const auto& rec : run.records) CHECK(rec.e2e_s >= rec.queue_s);
  // The schedule is seeded: same seed, same send times.
  std::vector<double> first;
  for (const auto& rec : run.records) first.push_back(rec.scheduled_s);
  CHECK(std::is_sorted(first.begin(), first.end()));
}
