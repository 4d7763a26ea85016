// Single-flight across processes on one host: DiskTier::load_or_lead and its lock files.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "store/disk_tier.hpp"
#include "store/file_lock.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::shared_ptr<DiskTier> tier_at(const TempDir& dir) { return open_disk_tier({.root = dir.path.string()}); }

/// Yields until `done` holds (for states another thread or process reaches without telling us).
template <class Pred>
bool eventually(Pred done, std::chrono::seconds limit = 20s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

std::size_t files_named(const fs::path& root, bool (*pred)(std::string_view)) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && pred(e.path().filename().string())) ++n;
  return n;
}

bool is_entry_name(std::string_view name) { return name.ends_with(".pt") && !is_temp_name(name); }

}  // namespace

TEST_CASE("load_or_lead: a miss takes the lease; a second lookup waits and gets the leader's entry") {
  TempDir dir;
  auto tier = tier_at(dir);
  const auto key = fake_key("clip");
  TierLookup<Artifact> first = tier->load_or_lead(key, 10s);
  CHECK_FALSE(first.stored);
  REQUIRE(first.lease);
  CHECK(fs::exists(tier->lock_path(key)));

  TierLookup<Artifact> second;
  std::thread waiter([&] { second = tier->load_or_lead(key, 30s); });
  REQUIRE(eventually([&] { return tier->lock_stats().lock_waits == 1; }));
  tier->store(key, fake_artifact("clip"));
  first.lease.reset();
  waiter.join();

  REQUIRE(second.stored);
  CHECK(*second.stored == fake_artifact("clip"));
  CHECK_FALSE(second.lease);
  DiskLockStats l = tier->lock_stats();
  CHECK(l.leases == 1);
  CHECK(l.lock_waits == 1);
  CHECK(l.lock_wait_hits == 1);
  CHECK(l.lock_takeovers == 0);
  CHECK(l.lock_timeouts == 0);
  TierStats s = tier->stats();
  CHECK(s.disk_misses == 1);  // one per lookup, however often the waiter looked
  CHECK(s.disk_hits == 1);
  CHECK_FALSE(fs::exists(tier->lock_path(key)));  // released: deleted by its holder

  TierLookup<Artifact> third = tier->load_or_lead(key, 1s);  // a plain hit takes no lock
  CHECK(third.stored);
  CHECK_FALSE(third.lease);
  CHECK(tier->lock_stats().lock_waits == 1);
}

TEST_CASE("load_or_lead: a lease dropped without an entry hands the lead to the waiter") {
  TempDir dir;
  auto tier = tier_at(dir);
  const auto key = fake_key("failing clip");
  TierLookup<Artifact> first = tier->load_or_lead(key, 10s);
  REQUIRE(first.lease);
  TierLookup<Artifact> second;
  std::thread waiter([&] { second = tier->load_or_lead(key, 30s); });
  REQUIRE(eventually([&] { return tier->lock_stats().lock_waits == 1; }));
  first.lease.reset();  // the leader failed: no entry
  waiter.join();
  CHECK_FALSE(second.stored);
  REQUIRE(second.lease);
  CHECK(tier->lock_stats().lock_takeovers == 1);
  CHECK(fs::exists(tier->lock_path(key)));
  second.lease.reset();
  CHECK_FALSE(fs::exists(tier->lock_path(key)));
}

TEST_CASE("load_or_lead: a waiter gives up after `wait` while the lock stays held, without a lease") {
  TempDir dir;
  auto tier = tier_at(dir);
  auto other = tier_at(dir);  // another holder of the folder (as another process would be)
  const auto key = fake_key("slow clip");
  TierLookup<Artifact> first = other->load_or_lead(key, 10s);
  REQUIRE(first.lease);
  const auto t0 = std::chrono::steady_clock::now();
  TierLookup<Artifact> second = tier->load_or_lead(key, 150ms);
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK_FALSE(second.stored);
  CHECK_FALSE(second.lease);
  CHECK(waited >= 150ms);
  CHECK(waited < 5s);
  CHECK(tier->lock_stats().lock_timeouts == 1);
  CHECK(tier->stats().disk_misses == 1);
  // The holder's entry is still found later, and a zero wait does not block at all.
  other->store(key, fake_artifact("slow clip"));
  CHECK(tier->load_or_lead(key, 0ms).stored);
}

TEST_CASE("load_or_lead on a disabled tier is a plain miss") {
  TempDir dir;
  write_bytes(dir.path / "file", {'x'});
  LogCapture logs;
  auto tier = open_disk_tier({.root = (dir.path / "file").string()});
  REQUIRE_FALSE(tier->enabled());
  TierLookup<Artifact> found = tier->load_or_lead(fake_key("x"), 1s);
  CHECK_FALSE(found.stored);
  CHECK_FALSE(found.lease);
}

TEST_CASE("threads leading different keys and the same keys through services sharing a tier encode each key once") {
  TempDir dir;
  auto tier = tier_at(dir);
  auto hook_a = std::make_shared<FakeHook>();
  auto hook_b = std::make_shared<FakeHook>();
  // Two services (as two worker processes would have) over one folder.
  FakeService a(hook_a, {}, tier);
  FakeService b(hook_b, {}, tier_at(dir));
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      FakeService& s = t % 2 ? a : b;
      for (int i = 0; i < 40; ++i) {
        const std::string text = "k" + std::to_string((i * 7 + t) % 10);
        if (s.get_or_encode(text) != fake_artifact(text)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(hook_a->encodes + hook_b->encodes == 10);
  CHECK(files_named(dir.path, is_lock_name) == 0);
}

TEST_CASE("lock files are never taken for entries; gc deletes the unheld ones only") {
  TempDir dir;
  auto tier = tier_at(dir);
  for (int i = 0; i < 3; ++i) tier->store(fake_key("e" + std::to_string(i)), fake_artifact("e" + std::to_string(i)));
  TierLookup<Artifact> held = tier->load_or_lead(fake_key("held"), 1s);
  REQUIRE(held.lease);
  // Lock files a killed leader would leave: beside an entry, and alone in a folder.
  const fs::path stale1 = tier->lock_path(fake_key("e0"));
  const fs::path stale2 = tier->lock_path(fake_key("never written"));
  fs::create_directories(stale2.parent_path());
  write_bytes(stale1, {});
  write_bytes(stale2, {'x', 'y'});

  ScanReport s = tier->scan();
  CHECK(s.entries == 3);
  VerifyReport v = tier->verify(true);
  CHECK(v.checked == 3);
  CHECK(v.ok == 3);
  CHECK(v.corrupt.empty());
  CHECK(fs::exists(stale1));
  GcReport g = tier->gc();
  CHECK(g.entries_after == 3);
  CHECK(g.evicted == 0);
  CHECK(g.stale_lock_files == 2);
  CHECK_FALSE(fs::exists(stale1));
  CHECK_FALSE(fs::exists(stale2));
  CHECK(fs::exists(tier->lock_path(fake_key("held"))));  // a live leader's lock stays
  CHECK(tier->clear() == 3);
  CHECK(fs::exists(tier->lock_path(fake_key("held"))));
  held.lease.reset();
  CHECK(files_named(dir.path, is_lock_name) == 0);
  CHECK(files_named(dir.path, is_entry_name) == 0);
}

TEST_CASE("a lock file deleted under its holder does not let two lookups lead at once") {
  TempDir dir;
  auto tier = tier_at(dir);
  const auto key = fake_key("clip");
  TierLookup<Artifact> first = tier->load_or_lead(key, 1s);
  REQUIRE(first.lease);
  // gc of another process cannot delete a held lock file...
  CHECK(tier->gc().stale_lock_files == 0);
  CHECK(fs::exists(tier->lock_path(key)));
  // ...but a person can: the next lookup then locks a new file and leads too, and the old holder's
  // release must not delete the new holder's file.
  fs::remove(tier->lock_path(key));
  TierLookup<Artifact> second = tier->load_or_lead(key, 1s);
  REQUIRE(second.lease);
  first.lease.reset();
  CHECK(fs::exists(tier->lock_path(key)));
  TierLookup<Artifact> third = tier->load_or_lead(key, 100ms);
  CHECK_FALSE(third.lease);
  CHECK(tier->lock_stats().lock_timeouts == 1);
  second.lease.reset();
  CHECK_FALSE(fs::exists(tier->lock_path(key)));
}

namespace {

/// What a child process's lookup through a service found: 0 encoded, 1 disk, 2 memory, 9 other.
int child_lookup(const std::string& root, int start_fd, std::chrono::milliseconds encode_time) {
  try {
    struct SlowHook : FakeHook {
      std::chrono::milliseconds time;
      Artifact encode_one(const std::string& s) override {
        std::this_thread::sleep_for(time);  // a real encode takes this long; nothing to synchronise with
        return FakeHook::encode_one(s);
      }
    };
    auto hook = std::make_shared<SlowHook>();
    hook->time = encode_time;
    FakeService service(hook, {}, open_disk_tier({.root = root}));
    char c;
    if (::read(start_fd, &c, 1) != 0) return 9;  // every child starts when the parent closes the pipe
    RequestTrace trace;
    if (service.get_or_encode("one clip", {}, &trace) != fake_artifact("one clip")) return 9;
    switch (trace.outcome) {
      case RequestOutcome::encoded: return 0;
      case RequestOutcome::disk_hit: return 1;
      case RequestOutcome::hit: return 2;
      default: return 9;
    }
  } catch (...) {
    return 9;
  }
}

}  // namespace

TEST_CASE("four processes started together on one clip and one folder: one encodes, three read its entry",
          "[processes]") {
  TempDir dir;
  tier_at(dir);
  for (int round = 0; round < 3; ++round) {
    tier_at(dir)->clear();
    int start[2];
    REQUIRE(::pipe(start) == 0);
    std::vector<pid_t> children;
    for (int p = 0; p < 4; ++p) {
      pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::close(start[1]);
        ::_exit(child_lookup(dir.path.string(), start[0], 300ms));
      }
      children.push_back(pid);
    }
    ::close(start[0]);
    ::close(start[1]);
    int encoded = 0, disk = 0, other = 0;
    for (pid_t pid : children) {
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFEXITED(status));
      const int code = WEXITSTATUS(status);
      (code == 0 ? encoded : code == 1 ? disk : other) += 1;
    }
    INFO("round " << round);
    CHECK(encoded == 1);
    CHECK(disk == 3);
    CHECK(other == 0);
    CHECK(files_named(dir.path, is_lock_name) == 0);
  }
}

TEST_CASE("a leader killed with SIGKILL holds the others up no longer than it lives", "[processes]") {
  TempDir dir;
  auto tier = tier_at(dir);
  const auto key = fake_key("killed leader's clip");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    auto child_tier = open_disk_tier({.root = dir.path.string()});
    TierLookup<Artifact> lead = child_tier->load_or_lead(key, 1s);
    char c = lead.lease ? 1 : 0;
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    for (;;) ::pause();  // "encoding" until killed
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  REQUIRE(c == 1);

  SECTION("a waiter takes the lead as soon as the holder dies") {
    TierLookup<Artifact> found;
    std::thread waiter([&] { found = tier->load_or_lead(key, 60s); });
    REQUIRE(eventually([&] { return tier->lock_stats().lock_waits == 1; }));
    const auto t0 = std::chrono::steady_clock::now();
    ::kill(pid, SIGKILL);
    waiter.join();
    CHECK(std::chrono::steady_clock::now() - t0 < 5s);
    CHECK_FALSE(found.stored);
    REQUIRE(found.lease);
    CHECK(tier->lock_stats().lock_takeovers == 1);
    tier->store(key, fake_artifact("x"));
    found.lease.reset();
    CHECK(files_named(dir.path, is_lock_name) == 0);
  }
  SECTION("the dead holder's lock file is cleaned by gc and never read as an entry") {
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    pid = -1;
    CHECK(fs::exists(tier->lock_path(key)));
    CHECK(tier->scan().entries == 0);
    CHECK(tier->verify(false).checked == 0);
    TierLookup<Artifact> found = tier->load_or_lead(key, 60s);  // not held: taken at once
    CHECK(found.lease);
    CHECK(tier->lock_stats().lock_waits == 0);
    found.lease.reset();
    CHECK_FALSE(fs::exists(tier->lock_path(key)));
    write_bytes(tier->lock_path(key), {});
    CHECK(tier->gc().stale_lock_files == 1);
    CHECK(files_named(dir.path, is_lock_name) == 0);
  }
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
}
