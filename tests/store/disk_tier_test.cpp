#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <latch>
#include <thread>

#include "store/disk_tier.hpp"
#include "store/entry_format.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;
namespace fs = std::filesystem;

namespace {

DiskTierOptions disk_at(const fs::path& root) {
  DiskTierOptions o;
  o.root = root.string();
  return o;
}

void set_mtime(const fs::path& p, std::time_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("restart persistence: a new service on the same root hits disk and does not encode") {
  TempDir dir;
  auto hook = std::make_shared<FakeHook>();
  Artifact first;
  {
    auto tier = open_disk_tier(disk_at(dir.path));
    REQUIRE(tier->enabled());
    FakeService service(hook, {}, tier);
    first = service.get_or_encode("hello");
    CHECK(hook->encodes == 1);
    CHECK(tier->stats().disk_writes == 1);
    CHECK(tier->stats().disk_misses == 1);
    CHECK(fs::exists(tier->entry_path(fake_key("hello"))));
  }
  auto tier = open_disk_tier(disk_at(dir.path));
  CHECK(tier->stats().disk_bytes > 0);  // the scan at open counts existing entries
  FakeService service(hook, {}, tier);
  RequestTrace trace;
  Artifact again = service.get_or_encode("hello", "", &trace);
  CHECK(hook->encodes == 1);
  CHECK(trace.outcome == RequestOutcome::disk_hit);
  CHECK(again == first);
  CHECK(again == fake_artifact("hello"));
  service.get_or_encode("hello", "", &trace);
  CHECK(trace.outcome == RequestOutcome::hit);
  auto s = service.stats();
  CHECK(s.tier.disk_hits == 1);
  CHECK(s.tier.disk_corrupt == 0);
  CHECK(s.tier.disk_writes == 0);
}

TEST_CASE("entry layout: versioned, per model, digest-named, private") {
  TempDir dir;
  auto tier = open_disk_tier(disk_at(dir.path));
  ReferenceEncodeKey key = fake_key("a", "../../etc/passwd");
  tier->store(key, fake_artifact("a"));
  const fs::path p = tier->entry_path(key);
  const std::string digest = key.digest();
  CHECK(p.filename() == digest + ".pt");
  CHECK(p.parent_path().filename() == digest.substr(0, 2));
  CHECK(p.parent_path().parent_path().parent_path() == fs::absolute(dir.path) / ("v" + std::to_string(kEntryFormat)));
  const std::string model_dir = p.parent_path().parent_path().filename().string();
  CHECK(model_dir.find('/') == std::string::npos);
  CHECK(model_dir.front() != '.');
  REQUIRE(fs::exists(p));
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(p.parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(*tier->load(key) == fake_artifact("a"));
}

TEST_CASE("corruption matrix: every damaged entry is a miss, deleted, recomputed and counted") {
  struct Case {
    const char* name;
    std::function<void(const fs::path& entry, const fs::path& other_entry)> damage;
    bool io_error = false;
  };
  const Artifact stored = fake_artifact("victim").compacted();
  std::vector<Case> cases = {
      {"zero-length", [](const fs::path& p, const fs::path&) { fs::resize_file(p, 0); }},
      {"truncated", [](const fs::path& p, const fs::path&) { fs::resize_file(p, fs::file_size(p) / 2); }},
      {"random bytes",
       [](const fs::path& p, const fs::path&) {
         std::vector<char> junk(fs::file_size(p));
         std::uint32_t x = 12345;
         for (char& c : junk) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
         write_bytes(p, junk);
       }},
      {"flipped bit in tensor data",
       [&](const fs::path& p, const fs::path&) {
         std::vector<char> bytes = read_bytes(p);
         const HostTensor& codes = stored.tensor("codes");
         auto raw = reinterpret_cast<const char*>(codes.raw());
         auto it = std::search(bytes.begin(), bytes.end(), raw, raw + codes.nbytes());
         REQUIRE(it != bytes.end());
         bytes[static_cast<std::size_t>(it - bytes.begin()) + codes.nbytes() / 2] ^= 0x04;
         write_bytes(p, bytes);
       }},
      {"another key's file renamed into place", [](const fs::path& p, const fs::path& other) { fs::rename(other, p); }},
      {"older format version",
       [&](const fs::path& p, const fs::path&) {
         write_bytes(p, encode_entry(fake_key("victim").canonical(), stored, kEntryFormat - 1));
       }},
      {"unreadable (chmod 000)", [](const fs::path& p, const fs::path&) { fs::permissions(p, fs::perms::none); }, true},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      if (c.io_error && running_as_root()) {
        WARN("SKIPPED: running as root, chmod 000 does not make a file unreadable");
        continue;
      }
      TempDir dir;
      auto hook = std::make_shared<FakeHook>();
      fs::path entry, other;
      {
        auto tier = open_disk_tier(disk_at(dir.path));
        FakeService service(hook, {}, tier);
        service.get_or_encode("victim");
        service.get_or_encode("bystander");
        entry = tier->entry_path(fake_key("victim"));
        other = tier->entry_path(fake_key("bystander"));
      }
      REQUIRE(hook->encodes == 2);
      c.damage(entry, other);

      auto tier = open_disk_tier(disk_at(dir.path));
      FakeService service(hook, {}, tier);
      Artifact got;
      REQUIRE_NOTHROW(got = service.get_or_encode("victim"));
      CHECK(got == fake_artifact("victim"));
      CHECK(hook->encodes == 3);  // recomputed
      TierStats s = tier->stats();
      if (c.io_error)
        CHECK(s.disk_errors == 1);
      else
        CHECK(s.disk_corrupt == 1);
      CHECK(s.disk_hits == 0);
      CHECK(s.disk_writes == 1);  // rewritten after the recompute

      // The rewritten entry is good: a third process-like service hits it.
      auto tier3 = open_disk_tier(disk_at(dir.path));
      FakeService service3(hook, {}, tier3);
      CHECK(service3.get_or_encode("victim") == fake_artifact("victim"));
      CHECK(hook->encodes == 3);
      CHECK(tier3->stats().disk_hits == 1);
      CHECK(tier3->verify(false).corrupt.empty());
    }
  }
}

TEST_CASE("verify reports and deletes corrupt entries; clear removes one model or all") {
  TempDir dir;
  auto tier = open_disk_tier(disk_at(dir.path));
  for (const char* t : {"a", "b", "c"}) tier->store(fake_key(t), fake_artifact(t));
  tier->store(fake_key("d", "other-model"), fake_artifact("d"));
  fs::resize_file(tier->entry_path(fake_key("b")), 10);
  fs::rename(tier->entry_path(fake_key("c")), tier->entry_path(fake_key("c")).parent_path() / "0000.pt");

  VerifyReport v = tier->verify(false);
  CHECK(v.checked == 4);
  CHECK(v.ok == 2);
  CHECK(v.corrupt.size() == 2);
  CHECK(v.removed == 0);
  v = tier->verify(true);
  CHECK(v.removed == 2);
  CHECK(tier->verify(false).corrupt.empty());

  ScanReport s = tier->scan();
  CHECK(s.entries == 2);
  CHECK(s.models.size() == 2);
  CHECK(s.models["other-model"].entries == 1);
  CHECK(tier->clear(std::string("other-model")) == 1);
  CHECK(tier->scan().entries == 1);
  CHECK(tier->clear() == 1);
  CHECK(tier->scan().entries == 0);
}

TEST_CASE("an unusable root disables the tier with one warning and the service runs memory-only") {
  TempDir dir;
  auto check_memory_only = [](std::shared_ptr<DiskTier> tier, LogCapture& logs) {
    CHECK_FALSE(tier->enabled());
    CHECK_FALSE(tier->disabled_reason().empty());
    auto hook = std::make_shared<FakeHook>();
    FakeService service(hook, {}, tier);
    CHECK(service.get_or_encode("x") == fake_artifact("x"));
    CHECK(service.get_or_encode("x") == fake_artifact("x"));
    service.clear();
    CHECK(service.get_or_encode("x") == fake_artifact("x"));
    CHECK(hook->encodes == 2);
    CHECK(tier->stats().disk_writes == 0);
    CHECK(tier->stats().disk_hits == 0);
    CHECK(logs.count() == 1);
  };

  SECTION("a regular file where the root folder should be") {
    const fs::path file = dir.path / "not-a-folder";
    write_bytes(file, {'x'});
    LogCapture logs;
    auto tier = open_disk_tier(disk_at(file));
    check_memory_only(tier, logs);
    CHECK(tier->disabled_reason().find("not a folder") != std::string::npos);
  }
  SECTION("a file where the version folder should be") {
    write_bytes(dir.path / ("v" + std::to_string(kEntryFormat)), {'x'});
    LogCapture logs;
    check_memory_only(open_disk_tier(disk_at(dir.path)), logs);
  }
  SECTION("a read-only root") {
    if (running_as_root()) {
      WARN("SKIPPED: running as root, a 0500 folder stays writable (the regular-file root case covers it)");
      return;
    }
    const fs::path ro = dir.path / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    LogCapture logs;
    check_memory_only(open_disk_tier(disk_at(ro)), logs);
  }
  SECTION("a root owned by another user") {
    if (!running_as_root()) {
      WARN("SKIPPED: only root can give a folder to another user");
      return;
    }
    const fs::path theirs = dir.path / "theirs";
    fs::create_directory(theirs);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    LogCapture logs;
    auto tier = open_disk_tier(disk_at(theirs));
    check_memory_only(tier, logs);
    CHECK(tier->disabled_reason().find("owned by uid") != std::string::npos);
  }
}

TEST_CASE("a missing root is created with owner-only permissions") {
  TempDir dir;
  const fs::path root = dir.path / "a" / "b" / "cache";
  auto tier = open_disk_tier(disk_at(root));
  REQUIRE(tier->enabled());
  struct stat st {};
  REQUIRE(::stat(root.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
}

TEST_CASE("entries over max_entry_bytes are refused on write and on load") {
  TempDir dir;
  DiskTierOptions o = disk_at(dir.path);
  o.max_entry_bytes = 100;
  auto small = open_disk_tier(o);
  small->store(fake_key("big"), fake_artifact("big"));
  CHECK(small->stats().disk_writes == 0);
  CHECK_FALSE(fs::exists(small->entry_path(fake_key("big"))));

  auto large = open_disk_tier(disk_at(dir.path));
  large->store(fake_key("big"), fake_artifact("big"));
  REQUIRE(fs::exists(large->entry_path(fake_key("big"))));
  CHECK(small->load(fake_key("big")) == nullptr);
  CHECK(small->stats().disk_misses == 1);
  CHECK(large->load(fake_key("big")) != nullptr);
}

TEST_CASE("eviction keeps the byte bound and removes the least recently used entries") {
  TempDir dir;
  std::uint64_t entry_size = 0;
  {
    auto probe = open_disk_tier(disk_at(dir.path));
    probe->store(fake_key("k0"), fake_artifact("k0"));
    entry_size = fs::file_size(probe->entry_path(fake_key("k0")));
  }
  DiskTierOptions o = disk_at(dir.path);
  o.max_disk_bytes = entry_size * 5 + entry_size / 2;
  auto tier = open_disk_tier(o);
  for (int i = 1; i < 5; ++i) tier->store(fake_key("k" + std::to_string(i)), fake_artifact("k" + std::to_string(i)));
  REQUIRE(tier->scan().entries == 5);
  const std::time_t base = std::time(nullptr) - 1000;
  for (int i = 0; i < 5; ++i) set_mtime(tier->entry_path(fake_key("k" + std::to_string(i))), base + i);
  REQUIRE(tier->load(fake_key("k0")) != nullptr);  // touched: now the most recent

  tier->store(fake_key("k5"), fake_artifact("k5"));  // 6 entries > bound: evict down to 90%
  ScanReport s = tier->scan();
  CHECK(s.bytes <= o.max_disk_bytes);
  CHECK(tier->stats().disk_evictions == 2);
  CHECK(tier->stats().disk_bytes == s.bytes);
  CHECK(fs::exists(tier->entry_path(fake_key("k0"))));
  CHECK_FALSE(fs::exists(tier->entry_path(fake_key("k1"))));
  CHECK_FALSE(fs::exists(tier->entry_path(fake_key("k2"))));
  CHECK(fs::exists(tier->entry_path(fake_key("k5"))));

  for (int i = 6; i < 40; ++i) {
    tier->store(fake_key("k" + std::to_string(i)), fake_artifact("k" + std::to_string(i)));
    REQUIRE(tier->scan().bytes <= o.max_disk_bytes);
  }

  GcReport g = tier->gc(entry_size * 2);
  CHECK(g.bytes_after <= entry_size * 2);
  CHECK(tier->scan().bytes <= entry_size * 2);
}

TEST_CASE("stale temporary files are cleaned on open and gc; fresh ones of live writers stay") {
  TempDir dir;
  auto tier = open_disk_tier(disk_at(dir.path));
  tier->store(fake_key("a"), fake_artifact("a"));
  const fs::path folder = tier->entry_path(fake_key("a")).parent_path();
  const fs::path dead = folder / ".tmp-999999999-1-1-x.pt";                            // no such process
  const fs::path old = folder / (".tmp-" + std::to_string(::getpid()) + "-1-1-y.pt");  // live pid, old
  const fs::path fresh = folder / (".tmp-" + std::to_string(::getpid()) + "-1-2-z.pt");
  for (const auto& p : {dead, old, fresh}) write_bytes(p, {'p', 'a', 'r', 't'});
  set_mtime(old, std::time(nullptr) - 3600);

  auto reopened = open_disk_tier(disk_at(dir.path));
  CHECK_FALSE(fs::exists(dead));
  CHECK_FALSE(fs::exists(old));
  CHECK(fs::exists(fresh));
  CHECK(reopened->scan().entries == 1);  // temporary files are never entries
  set_mtime(fresh, std::time(nullptr) - 3600);
  CHECK(reopened->gc().stale_temp_files == 1);
  CHECK_FALSE(fs::exists(fresh));
}

TEST_CASE("many threads of one process share a tier without a wrong read") {
  TempDir dir;
  DiskTierOptions o = disk_at(dir.path);
  o.max_disk_bytes = 20'000;  // small: eviction runs while others read
  auto tier = open_disk_tier(o);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const std::string text = "key" + std::to_string((i * 7 + t) % 23);
        if ((i + t) % 2) {
          tier->store(fake_key(text), fake_artifact(text).compacted());
        } else if (auto got = tier->load(fake_key(text)); got && *got != fake_artifact(text).compacted()) {
          ++wrong;
        }
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(tier->stats().disk_corrupt == 0);
  CHECK(tier->stats().disk_errors == 0);
  CHECK(tier->verify(false).corrupt.empty());
}

namespace {

/// A small tmpfs mounted on a fresh folder (needs root and mount rights; `ok` false otherwise).
struct SmallMount {
  TempDir dir;
  bool ok = false;
  SmallMount(const char* options, unsigned long flags) {
    ok = running_as_root() && ::mount("tmpfs", dir.path.c_str(), "tmpfs", flags, options) == 0;
  }
  ~SmallMount() {
    if (ok) ::umount2(dir.path.c_str(), MNT_DETACH);
  }
};

}  // namespace

TEST_CASE("a full or read-only file system disables the tier with one warning (tmpfs; root only)") {
  SECTION("full: ENOSPC on write") {
    SmallMount m("size=64k,mode=0700", 0);
    if (!m.ok) {
      WARN("SKIPPED: cannot mount a tmpfs here (needs root and mount rights)");
      return;
    }
    LogCapture logs;
    auto tier = open_disk_tier(disk_at(m.dir.path / "cache"));
    REQUIRE(tier->enabled());
    auto hook = std::make_shared<FakeHook>();
    FakeService service(hook, {}, tier);
    for (int i = 0; i < 100; ++i) {
      const std::string text = "fill" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 7) * 300, 'x');
      Artifact got;
      REQUIRE_NOTHROW(got = service.get_or_encode(text));
      CHECK(got == fake_artifact(text));
    }
    CHECK_FALSE(tier->enabled());
    CHECK(tier->disabled_reason().find("No space") != std::string::npos);
    CHECK(tier->stats().disk_errors >= 1);
    CHECK(tier->stats().disk_writes >= 1);
    CHECK(logs.count() == 1);
  }
  SECTION("read-only mount: EROFS at open") {
    SmallMount m("size=64k,mode=0700", MS_RDONLY);
    if (!m.ok) {
      WARN("SKIPPED: cannot mount a tmpfs here (needs root and mount rights)");
      return;
    }
    LogCapture logs;
    auto tier = open_disk_tier(disk_at(m.dir.path));
    CHECK_FALSE(tier->enabled());
    auto hook = std::make_shared<FakeHook>();
    FakeService service(hook, {}, tier);
    CHECK(service.get_or_encode("x") == fake_artifact("x"));
    CHECK(service.get_or_encode("x") == fake_artifact("x"));
    CHECK(hook->encodes == 1);
    CHECK(logs.count() == 1);
  }
}

namespace {

/// Worker threads asking a service for keys of a small set, plus one new key per request: every
/// answer is compared with a fresh encode of its own input; anything else is counted.
struct RequestLoop {
  FakeService& service;
  std::atomic<bool> stop{false};
  std::atomic<long> answered{0}, wrong{0}, thrown{0};
  std::vector<std::thread> threads;

  /// Each thread counts `started` down after its first `warmup` answers, and after `stop` is set it
  /// still finishes the request it is in.
  RequestLoop(FakeService& s, int thread_count, int keys, long warmup, std::latch& started) : service(s) {
    for (int t = 0; t < thread_count; ++t)
      threads.emplace_back([this, t, keys, warmup, &started] {
        for (long i = 0; !stop; ++i) {
          const std::string text =
              i % 2 ? "key" + std::to_string((i * 7 + t) % keys) : "new-" + std::to_string(t) + "-" + std::to_string(i);
          try {
            if (service.get_or_encode(text) != fake_artifact(text)) ++wrong;
          } catch (...) {
            ++thrown;
          }
          ++answered;
          if (i + 1 == warmup) started.count_down();
        }
      });
  }
  void finish() {
    stop = true;
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  ~RequestLoop() { finish(); }  // also when a REQUIRE leaves the test early
};

}  // namespace

TEST_CASE(
    "a root remounted read-only in the middle of a run: requests go on, the tier disables itself once (tmpfs; root "
    "only)") {
  SmallMount m("size=16m,mode=0700", 0);
  if (!m.ok) {
    WARN("SKIPPED: cannot mount a tmpfs here (needs root and mount rights)");
    return;
  }
  LogCapture logs;
  DiskTierOptions o = disk_at(m.dir.path / "cache");
  o.max_disk_bytes = 256 << 10;  // eviction keeps the tmpfs far from full: the only fault is the remount
  auto tier = open_disk_tier(o);
  REQUIRE(tier->enabled());
  auto hook = std::make_shared<FakeHook>();
  FakeService service(hook, {.max_items = 4}, tier);  // a small memory tier: most answers go through the disk

  std::latch warmed_up(4);
  RequestLoop loop(service, 4, 40, 200, warmed_up);
  warmed_up.wait();
  const TierStats before = tier->stats();
  // Remount while the workers run. A remount to read-only is refused (EBUSY) while a file is open
  // for writing, which a writer holds for a moment: try until it lands between two writes.
  int attempts = 0;
  bool remounted = false;
  while (!remounted && attempts < 100000) {
    ++attempts;
    remounted = ::mount("tmpfs", m.dir.path.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=16m,mode=0700") == 0;
    if (!remounted && errno != EBUSY) {
      const int e = errno;
      loop.finish();
      WARN("SKIPPED: cannot remount the tmpfs here: " << std::strerror(e));
      return;
    }
    if (!remounted) std::this_thread::yield();
  }
  REQUIRE(remounted);
  const long answered_at_remount = loop.answered;
  while (tier->enabled() || loop.answered < answered_at_remount + 400) std::this_thread::yield();
  loop.finish();

  INFO("remount attempts: " << attempts << ", answers " << loop.answered << " (" << answered_at_remount
                            << " before the remount)");
  CHECK(loop.wrong == 0);
  CHECK(loop.thrown == 0);
  CHECK(before.disk_writes > 0);
  CHECK(before.disk_hits > 0);
  CHECK_FALSE(tier->enabled());
  CHECK(tier->disabled_reason().find("Read-only file system") != std::string::npos);
  CHECK(tier->stats().disk_errors >= 1);
  CHECK(tier->stats().disk_corrupt == 0);
  CHECK(logs.count() == 1);

  // Memory-only from now on: still right, nothing more counted on the disk.
  const TierStats disabled = tier->stats();
  for (int i = 0; i < 40; ++i)
    CHECK(service.get_or_encode("key" + std::to_string(i)) == fake_artifact("key" + std::to_string(i)));
  CHECK(tier->stats().disk_writes == disabled.disk_writes);
  CHECK(tier->stats().disk_hits == disabled.disk_hits);

  // What was written before is intact: read back read-only, then after a remount read-write.
  auto reader = open_disk_tier(disk_at(m.dir.path / "cache"));
  CHECK_FALSE(reader->enabled());
  REQUIRE(::mount("tmpfs", m.dir.path.c_str(), "tmpfs", MS_REMOUNT, "size=16m,mode=0700") == 0);
  auto again = open_disk_tier(disk_at(m.dir.path / "cache"));
  REQUIRE(again->enabled());
  const VerifyReport v = again->verify(false);
  CHECK(v.corrupt.empty());
  CHECK(v.ok >= 1);
  CHECK(again->scan().stale_temp_files == 0);
}

TEST_CASE("entry files deleted and truncated under a running service: right answers, damage counted and repaired") {
  TempDir dir;
  LogCapture logs;
  auto tier = open_disk_tier(disk_at(dir.path));
  auto hook = std::make_shared<FakeHook>();
  FakeService service(hook, {.max_items = 2}, tier);
  constexpr int kKeys = 30;
  auto key_text = [](int i) { return "key" + std::to_string(i); };

  SECTION("while requests run") {
    std::latch warmed_up(4);
    RequestLoop loop(service, 4, kKeys, 100, warmed_up);
    warmed_up.wait();
    // Delete every other entry and cut the others in half, over and over, while the workers read and
    // rewrite them.
    long deleted = 0, truncated = 0;
    for (int round = 0; round < 300; ++round) {
      for (int i = 0; i < kKeys; ++i) {
        const fs::path p = tier->entry_path(fake_key(key_text(i)));
        if ((i + round) % 2) {
          deleted += ::unlink(p.c_str()) == 0;
        } else if (struct stat st{}; ::stat(p.c_str(), &st) == 0 && st.st_size > 1) {
          truncated += ::truncate(p.c_str(), st.st_size / 2) == 0;
        }
      }
      std::this_thread::yield();
    }
    loop.finish();
    INFO("answers " << loop.answered << ", files deleted " << deleted << ", truncated " << truncated);
    CHECK(loop.wrong == 0);
    CHECK(loop.thrown == 0);
    CHECK(deleted > 0);
    CHECK(truncated > 0);
  }
  SECTION("between requests, every entry at once") {
    for (int i = 0; i < kKeys; ++i) service.get_or_encode(key_text(i));
    service.clear();
    for (int i = 0; i < kKeys; ++i) {
      const fs::path p = tier->entry_path(fake_key(key_text(i)));
      if (i % 2)
        fs::remove(p);
      else
        fs::resize_file(p, fs::file_size(p) / 2);
    }
    const TierStats before = tier->stats();
    const int encodes = hook->encodes;
    for (int i = 0; i < kKeys; ++i) CHECK(service.get_or_encode(key_text(i)) == fake_artifact(key_text(i)));
    CHECK(hook->encodes == encodes + kKeys);                               // each one recomputed
    CHECK(tier->stats().disk_corrupt == before.disk_corrupt + kKeys / 2);  // the truncated ones
    CHECK(tier->stats().disk_writes == before.disk_writes + kKeys);        // and written again
  }

  // Either way, every entry is repaired by the next read that needs it: afterwards each key is a disk
  // hit of the right artifact, the tier is still on, and nothing corrupt is left.
  service.clear();
  for (int i = 0; i < kKeys; ++i) CHECK(service.get_or_encode(key_text(i)) == fake_artifact(key_text(i)));
  service.clear();
  const int encodes = hook->encodes;
  const std::uint64_t hits = tier->stats().disk_hits;
  for (int i = 0; i < kKeys; ++i) CHECK(service.get_or_encode(key_text(i)) == fake_artifact(key_text(i)));
  CHECK(hook->encodes == encodes);
  CHECK(tier->stats().disk_hits == hits + kKeys);
  CHECK(tier->enabled());
  CHECK(tier->stats().disk_errors == 0);
  CHECK(tier->verify(false).corrupt.empty());
  CHECK(logs.count() == 0);
}
