#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "fake_backend.hpp"
#include "profile/orchestration/cell_warmup.hpp"

using namespace refenc::profile;
using namespace refenc::profile::testing;

namespace {

/// Records every call the hook gets, and holds each until `expected` calls are in flight together
/// (or 10 s pass), so a test can tell calls made at once from calls made one after another.
struct RecordingHook : FakeHook {
  std::mutex m;
  std::condition_variable cv;
  int expected = 1, in_flight = 0, most_in_flight = 0;
  std::vector<std::vector<std::string>> batches;
  std::vector<std::string> singles;

  void meet() {
    std::unique_lock lock(m);
    most_in_flight = std::max(most_in_flight, ++in_flight);
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return most_in_flight >= expected; });
    --in_flight;
  }
  std::string encode_one(const std::string& s) override {
    {
      std::lock_guard lock(m);
      singles.push_back(s);
    }
    meet();
    return FakeHook::encode_one(s);
  }
  std::vector<std::string> encode_batch(std::span<const std::string* const> items) override {
    std::vector<std::string> b;
    for (const std::string* s : items) b.push_back(*s);
    {
      std::lock_guard lock(m);
      batches.push_back(b);
    }
    meet();
    std::vector<std::string> out;
    for (const std::string* s : items) out.push_back(FakeHook::encode_one(*s));
    return out;
  }
};

std::vector<ReferenceItem> refs_of(const std::vector<double>& seconds, const std::string& prefix = "ref") {
  std::vector<ReferenceItem> out;
  for (std::size_t i = 0; i < seconds.size(); ++i) out.push_back({prefix + std::to_string(i), "", nullptr, seconds[i], 24000});
  return out;
}

std::vector<WorkItem> items_of(const std::vector<ReferenceItem>& r) {
  std::vector<WorkItem> out;
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back({i, &r[i], "text", "t"});
  return out;
}

/// A service with batching off: every encode_batch call the hook sees comes from priming.
std::unique_ptr<ServiceHandle> single_call_service(const std::shared_ptr<RecordingHook>& hook) {
  return make_service_handle(std::make_shared<FakeService>(hook, service_options({}, {}), nullptr), fake_raw);
}

}  // namespace

TEST_CASE("cell warmup: the largest calls of an arm") {
  ArmSpec m4b;
  m4b.arm = Arm::m4b;
  m4b.max_batch_size = 8;
  m4b.batch_workers = 2;
  CHECK(largest_calls(m4b, 16, 1) == CallShape{8, 2, 1});
  CHECK(largest_calls(ArmSpec{}, 16, 0) == CallShape{1, 16, 0});
  m4b.max_batch_size = 1;  // a batching arm that cannot batch makes single calls, one per worker
  CHECK(largest_calls(m4b, 4, 0) == CallShape{1, 4, 0});
}

TEST_CASE("cell warmup: priming runs the batch workers' batches of the longest references at once, once per shape") {
  auto hook = std::make_shared<RecordingHook>();
  hook->batch = true;
  hook->expected = 2;
  const auto refs = refs_of({2, 9, 4, 12, 7, 12});
  const auto warmup = items_of(refs);
  CellWarmup cw;
  auto service = single_call_service(hook);
  cw.run(*service, warmup, {3, 2, 0}, {.concurrency = 4}, 12.5);
  // Two batches, in flight together, each of the three longest (ties in order), outside the service.
  REQUIRE(hook->batches.size() == 2);
  const std::vector<std::string> longest{"ref3|t", "ref5|t", "ref1|t"};
  CHECK(hook->batches[0] == longest);
  CHECK(hook->batches[1] == longest);
  CHECK(hook->most_in_flight >= 2);
  // The warm-up requests then went through the service: it counted those and nothing else.
  CHECK(hook->singles.size() == warmup.size());
  CHECK(service->stats().misses == warmup.size());

  // A later cell of the same shape is not primed again; another shape is.
  auto again = single_call_service(hook);
  cw.run(*again, warmup, {3, 2, 0}, {.concurrency = 4}, 12.5);
  CHECK(hook->batches.size() == 2);
  CHECK(again->stats().misses == warmup.size());
  cw.run(*single_call_service(hook), warmup, {2, 1, 0}, {.concurrency = 4}, 12.5);
  REQUIRE(hook->batches.size() == 3);
  CHECK(hook->batches[2] == std::vector<std::string>{"ref3|t", "ref5|t"});
  CHECK(cw.primed().size() == 2);
}

TEST_CASE("cell warmup: single calls prime one call of the longest reference per worker") {
  auto hook = std::make_shared<RecordingHook>();
  hook->expected = 4;
  const auto refs = refs_of({3, 11, 5});
  CellWarmup cw;
  auto service = single_call_service(hook);
  cw.run(*service, items_of(refs), {1, 4, 0}, {.concurrency = 4}, 12.5);
  REQUIRE(hook->singles.size() == 4 + 3);
  // Priming came first: four calls of the longest, all in flight together.
  for (int i = 0; i < 4; ++i) CHECK(hook->singles[static_cast<std::size_t>(i)] == "ref1|t");
  CHECK(hook->most_in_flight == 4);
  CHECK(hook->batches.empty());
  CHECK(service->stats().misses == 3);
}

TEST_CASE("cell warmup: nothing runs without warm-up references; a failing priming call loses nothing") {
  auto hook = std::make_shared<RecordingHook>();
  hook->batch = true;
  CellWarmup cw;
  auto service = single_call_service(hook);
  cw.run(*service, {}, {8, 2, 0}, {.concurrency = 4}, 12.5);
  CHECK(hook->batches.empty());
  CHECK(hook->singles.empty());
  CHECK(cw.primed().empty());

  // "fail:" references make the fake encoder throw: priming swallows it, the warm-up records it.
  const auto bad = refs_of({4, 6}, "fail:");
  hook->expected = 1;
  cw.run(*service, items_of(bad), {2, 1, 0}, {.concurrency = 2}, 12.5);
  CHECK(hook->batches.size() == 1);
  CHECK(service->stats().failed == 2);
}
