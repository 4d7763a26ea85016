// WriteBehind: writes land after the call returns, in order, bounded by bytes, and none is lost at
// destruction. A gated fake tier forces the interleavings (no sleeps).
#include <catch2/catch.hpp>

#include <sched.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "store/disk_tier.hpp"
#include "store/write_behind.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;

namespace {

/// Records writes (key text, thread) and, while `closed`, holds each write until open() is called.
struct GatedTier final : SecondTier<Artifact> {
  std::mutex mutex;
  std::condition_variable changed;
  bool closed = false;
  bool waiting = false;  ///< A write is held at the gate.
  std::vector<std::pair<std::string, std::thread::id>> writes;
  std::vector<int> policies;  ///< The scheduling policy of the thread of each write.
  std::map<std::string, std::string> values;  ///< Key input_key -> the ref_text written last.

  std::shared_ptr<const Artifact> load(const ReferenceEncodeKey&) noexcept override { return nullptr; }
  void store(const ReferenceEncodeKey& key, const Artifact& stored) noexcept override {
    std::unique_lock lock(mutex);
    waiting = true;
    changed.notify_all();
    changed.wait(lock, [&] { return !closed; });
    waiting = false;
    writes.emplace_back(key.input_key, std::this_thread::get_id());
    policies.push_back(::sched_getscheduler(0));
    values[key.input_key] = stored.meta.at("ref_text");
  }
  TierStats stats() const override { return {}; }
  void open() {
    std::lock_guard lock(mutex);
    closed = false;
    changed.notify_all();
  }
  void await_held_write() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return waiting; });
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return writes.size();
  }
};

std::shared_ptr<const Artifact> artifact(const std::string& text) {
  return std::make_shared<const Artifact>(fake_artifact(text));
}

}  // namespace

TEST_CASE("write-behind: store returns before the write; flush waits for it") {
  auto tier = std::make_shared<GatedTier>();
  tier->closed = true;
  WriteBehind fill(tier);
  fill.store(fake_key("a"), artifact("a"));  // the worker takes it and is held at the gate
  tier->await_held_write();
  CHECK(tier->count() == 0);
  fill.store(fake_key("b"), artifact("b"));  // queued behind it, still returns
  CHECK(tier->count() == 0);
  tier->open();
  fill.flush();
  REQUIRE(tier->count() == 2);
  CHECK(tier->writes[0].first == fake_key("a").input_key);  // in queue order
  CHECK(tier->writes[1].first == fake_key("b").input_key);
  CHECK(tier->writes[0].second != std::this_thread::get_id());
}

TEST_CASE("write-behind: the worker runs under SCHED_BATCH, so waking it never preempts the caller") {
  REQUIRE(::sched_getscheduler(0) == SCHED_OTHER);
  auto tier = std::make_shared<GatedTier>();
  WriteBehind fill(tier);
  fill.store(fake_key("a"), artifact("a"));
  fill.flush();
  REQUIRE(tier->policies.size() == 1);
  CHECK(tier->policies[0] == SCHED_BATCH);
  CHECK(::sched_getscheduler(0) == SCHED_OTHER);  // the caller's own policy is untouched
}

TEST_CASE("write-behind: the same key twice keeps the later value") {
  auto tier = std::make_shared<GatedTier>();
  WriteBehind fill(tier);
  auto first = std::make_shared<Artifact>(fake_artifact("k"));
  auto second = std::make_shared<Artifact>(fake_artifact("k"));
  first->meta["ref_text"] = "first";
  second->meta["ref_text"] = "second";
  fill.store(fake_key("k"), first);
  fill.store(fake_key("k"), second);
  fill.flush();
  CHECK(tier->values.at(fake_key("k").input_key) == "second");
}

TEST_CASE("write-behind: over the byte bound the caller writes itself; nothing is dropped") {
  auto tier = std::make_shared<GatedTier>();
  const auto one = artifact("x");
  WriteBehind fill(tier, one->byte_size());  // room for one entry
  tier->closed = true;
  fill.store(fake_key("x"), one);
  tier->await_held_write();  // that one is being written and still counts
  tier->open();              // the next write would go over the bound: it runs on this thread
  fill.store(fake_key("y"), artifact("y"));
  fill.flush();
  REQUIRE(tier->count() == 2);
  std::thread::id y_thread;
  for (const auto& [digest, id] : tier->writes)
    if (digest == fake_key("y").input_key) y_thread = id;
  CHECK(y_thread == std::this_thread::get_id());
}

TEST_CASE("write-behind: destruction writes every queued entry") {
  auto tier = std::make_shared<GatedTier>();
  tier->closed = true;
  {
    WriteBehind fill(tier);
    for (int i = 0; i < 20; ++i) fill.store(fake_key("e" + std::to_string(i)), artifact("e" + std::to_string(i)));
    tier->await_held_write();
    tier->open();
  }
  CHECK(tier->count() == 20);
}

TEST_CASE("write-behind: fills a real disk tier whose entries then load") {
  TempDir dir;
  auto disk = open_disk_tier({.root = dir.path.string()});
  {
    WriteBehind fill(disk);
    fill.store(fake_key("alice"), artifact("alice"));
    fill.flush();
    auto got = disk->load(fake_key("alice"));
    REQUIRE(got);
    CHECK(*got == fake_artifact("alice"));
  }
  CHECK(disk->stats().disk_writes == 1);
}
