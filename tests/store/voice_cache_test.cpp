#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "store/voice_cache.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;
namespace fs = std::filesystem;

namespace {
VoiceCacheOptions voices_at(const fs::path& root) {
  VoiceCacheOptions o;
  o.root = root.string();
  return o;
}
}  // namespace

TEST_CASE("voice names are case-insensitive and validated") {
  TempDir dir;
  VoiceCache voices(voices_at(dir.path));
  REQUIRE(voices.persistent());
  voices.put({"fish", "Alice", "1", "codes"}, fake_artifact("alice"));
  auto hit = voices.get({"fish", "ALICE", "1", "codes"});
  REQUIRE(hit);
  CHECK(*hit == fake_artifact("alice"));
  CHECK_FALSE(voices.get({"fish", "alice", "2", "codes"}));
  CHECK_FALSE(voices.get({"fish", "alice", "1", "speaker"}));
  CHECK_FALSE(voices.get({"qwen", "alice", "1", "codes"}));
  auto s = voices.stats();
  CHECK(s.hit_count == 1);
  CHECK(s.miss_count == 3);
  CHECK(s.entries == 1);
  CHECK(s.memory_bytes == fake_artifact("alice").byte_size());

  for (std::string bad : {std::string(), std::string("../x"), std::string("a/b"), std::string("a\\b"),
                          std::string(".hidden"), std::string(".."), std::string(65, 'v'), std::string("tab\there"),
                          std::string(" padded"), std::string("nul\0x", 5)}) {
    INFO(bad);
    CHECK_THROWS_AS(voices.put({"fish", bad, "1", "codes"}, fake_artifact("x")), Error);
    try {
      voices.get({"fish", bad, "1", "codes"});
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::bad_input);
      CHECK(std::string(e.what()).find("voice name") != std::string::npos);
    }
  }
  CHECK(VoiceCache::normalize_voice_name("Émile Zola") == "Émile zola");
  CHECK_NOTHROW(VoiceCache::normalize_voice_name(std::string(64, 'v')));
  // Nothing escaped the voices folder.
  for (auto& e : fs::recursive_directory_iterator(dir.path))
    if (e.is_regular_file()) CHECK(e.path().string().rfind(voices.folder().string(), 0) == 0);
}

TEST_CASE("voices persist across instances and clear_voice removes one voice from memory and disk") {
  TempDir dir;
  {
    VoiceCache voices(voices_at(dir.path));
    CHECK(voices.put({"fish", "alice", "1", "codes"}, fake_artifact("a1")));
    CHECK(voices.put({"fish", "alice", "2", "codes"}, fake_artifact("a2")));
    CHECK(voices.put({"qwen", "Alice", "1", "speaker"}, fake_artifact("aq")));
    CHECK(voices.put({"fish", "bob", "1", "codes"}, fake_artifact("b1")));
  }
  VoiceCache voices(voices_at(dir.path));
  CHECK(voices.stats().entries == 0);
  auto a1 = voices.get({"fish", "Alice", "1", "codes"});
  REQUIRE(a1);
  CHECK(*a1 == fake_artifact("a1"));
  CHECK(voices.stats().hit_count == 1);
  CHECK(voices.list().size() == 4);
  CHECK(voices.list(std::string("ALICE")).size() == 3);

  CHECK(voices.clear_voice("alice", std::string("qwen")));
  CHECK(voices.list(std::string("alice")).size() == 2);
  CHECK(voices.stats().delete_invalidation_counter == 1);

  CHECK(voices.clear_voice("Alice"));
  CHECK(voices.stats().delete_invalidation_counter == 2);
  CHECK_FALSE(voices.get({"fish", "alice", "1", "codes"}));  // memory and disk both gone
  CHECK_FALSE(voices.clear_voice("alice"));                  // a repeated clear counts nothing
  CHECK_FALSE(voices.clear_voice("ALICE"));
  CHECK(voices.stats().delete_invalidation_counter == 2);
  CHECK_FALSE(voices.clear_voice("nobody"));
  CHECK(voices.stats().delete_invalidation_counter == 2);

  auto bob = voices.get({"fish", "bob", "1", "codes"});  // untouched
  REQUIRE(bob);
  CHECK(*bob == fake_artifact("b1"));
  VoiceCache other(voices_at(dir.path));
  CHECK_FALSE(other.get({"fish", "alice", "2", "codes"}));
  CHECK(other.get({"fish", "bob", "1", "codes"}));

  voices.put({"fish", "alice", "3", "codes"}, fake_artifact("a3"));  // re-registered, then cleared again
  CHECK(voices.clear_voice("alice"));
  CHECK(voices.stats().delete_invalidation_counter == 3);

  voices.clear();
  CHECK(voices.list().empty());
  CHECK(voices.stats().entries == 0);
  CHECK_FALSE(other.get({"fish", "bob", "1", "codes"}) == nullptr);  // other's memory still has it
  VoiceCache third(voices_at(dir.path));
  CHECK_FALSE(third.get({"fish", "bob", "1", "codes"}));
}

TEST_CASE("registered voices are pinned in memory: no byte bound or later traffic evicts one") {
  VoiceCacheOptions o;
  o.persist = false;  // memory is then the only copy: losing an entry would lose the voice
  o.max_voices = 200;
  VoiceCache voices(o);
  CHECK_FALSE(voices.persistent());
  std::uint64_t bytes = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string name = "v" + std::to_string(i);
    voices.put({"fish", name, "1", "codes"}, fake_artifact(name));
    bytes += fake_artifact(name).byte_size();
  }
  for (int round = 0; round < 3; ++round)  // repeated reads of a few voices promote nothing out
    for (int i = 0; i < 5; ++i) REQUIRE(voices.get({"fish", "v" + std::to_string(i), "1", "codes"}));
  for (int i = 0; i < 200; ++i) {
    const std::string name = "v" + std::to_string(i);
    auto got = voices.get({"fish", name, "1", "codes"});
    REQUIRE(got);
    CHECK(*got == fake_artifact(name));
  }
  auto s = voices.stats();
  CHECK(s.entries == 200);
  CHECK(s.memory_bytes == bytes);
  CHECK(s.max_voices == 200);
  CHECK(voices.list().size() == 200);
  CHECK(voices.voice_count() == 200);
}

TEST_CASE("max_voices: a put past the cap is refused with a clear error; versions and models of a voice count once") {
  TempDir dir;
  VoiceCacheOptions o = voices_at(dir.path);
  o.max_voices = 3;
  VoiceCache voices(o);
  for (std::string name : {"alice", "bob", "carol"})
    CHECK(voices.put({"fish", name, "1", "codes"}, fake_artifact(name)));
  CHECK(voices.put({"fish", "Alice", "2", "codes"}, fake_artifact("a2")));      // a new version
  CHECK(voices.put({"qwen", "BOB", "1", "speaker"}, fake_artifact("bq")));      // another model
  CHECK(voices.put({"fish", "carol", "1", "codes"}, fake_artifact("carol2")));  // a replacement
  CHECK(voices.voice_count() == 3);
  try {
    voices.put({"fish", "dave", "1", "codes"}, fake_artifact("dave"));
    FAIL("no cap error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    CHECK(std::string(e.what()) == "voice cap reached: 3 registered voices (max_voices 3)");
  }
  CHECK_THROWS_AS(voices.check_cap("Dave"), Error);
  CHECK_NOTHROW(voices.check_cap("ALICE"));
  CHECK_FALSE(voices.get({"fish", "dave", "1", "codes"}));
  CHECK(voices.list(std::string("dave")).empty());
  CHECK(voices.stats().cap_refusals == 2);

  // Another instance (another process) counts the voices on disk, not only its own memory.
  VoiceCache other(o);
  CHECK(other.stats().entries == 0);
  CHECK_THROWS_WITH(other.put({"fish", "erin", "1", "codes"}, fake_artifact("e")),
                    "voice cap reached: 3 registered voices (max_voices 3)");
  // Removing a voice makes room.
  CHECK(voices.clear_voice("bob"));
  CHECK(other.put({"fish", "erin", "1", "codes"}, fake_artifact("e")));
  CHECK(voices.voice_count() == 3);
  CHECK_THROWS_AS(voices.put({"fish", "bob", "1", "codes"}, fake_artifact("bob")), Error);

  VoiceCacheOptions zero = o;
  zero.max_voices = 0;
  CHECK_THROWS_AS(VoiceCache(zero), Error);
}

TEST_CASE("max_voices holds for threads registering at once") {
  TempDir dir;
  VoiceCacheOptions o = voices_at(dir.path);
  o.max_voices = 5;
  VoiceCache voices(o);
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        try {
          voices.put({"fish", "t" + std::to_string(t) + "-" + std::to_string(i), "1", "codes"}, fake_artifact("x"));
        } catch (const Error&) {
          ++refused;
        }
      }
    });
  for (auto& th : threads) th.join();
  CHECK(refused == 11);
  CHECK(voices.voice_count() == 5);
  CHECK(voices.list().size() == 5);
}

TEST_CASE("a corrupt voice entry is a miss and is deleted") {
  TempDir dir;
  VoiceCache voices(voices_at(dir.path));
  voices.put({"fish", "carol", "1", "codes"}, fake_artifact("c"));
  auto entries = voices.list();
  REQUIRE(entries.size() == 1);
  fs::resize_file(entries[0].path, 7);
  VoiceCache fresh(voices_at(dir.path));
  CHECK_NOTHROW(fresh.get({"fish", "carol", "1", "codes"}));
  CHECK_FALSE(fs::exists(entries[0].path));
}

TEST_CASE("an unusable root makes the voice cache memory-only with one warning") {
  TempDir dir;
  write_bytes(dir.path / "file", {'x'});
  LogCapture logs;
  VoiceCache voices(voices_at(dir.path / "file"));
  CHECK_FALSE(voices.persistent());
  CHECK_FALSE(voices.put({"fish", "dan", "1", "codes"}, fake_artifact("d")));
  CHECK(voices.get({"fish", "dan", "1", "codes"}));
  CHECK(logs.count() == 1);
}

TEST_CASE("max_voices holds for processes registering into one folder at once", "[processes]") {
  TempDir dir;
  VoiceCacheOptions o = voices_at(dir.path);
  o.max_voices = 6;
  VoiceCache(o).put({"fish", "first", "1", "codes"}, fake_artifact("first"));  // the folder exists before the race
  int start[2];
  REQUIRE(::pipe(start) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(start[1]);
      int registered = 0;
      try {
        VoiceCache voices(o);
        char c;
        if (::read(start[0], &c, 1) != 0) ::_exit(99);
        for (int i = 0; i < 4; ++i) {
          try {
            voices.put({"fish", "p" + std::to_string(p) + "-" + std::to_string(i), "1", "codes"}, fake_artifact("x"));
            ++registered;
          } catch (const Error& e) {
            if (e.kind() != ErrorKind::bad_input) ::_exit(98);
          }
        }
      } catch (...) {
        ::_exit(97);
      }
      ::_exit(registered);
    }
    children.push_back(pid);
  }
  ::close(start[0]);
  ::close(start[1]);
  int registered = 0;
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) <= 4);
    registered += WEXITSTATUS(status);
  }
  CHECK(registered == 5);
  VoiceCache after(o);
  CHECK(after.voice_count() == 6);
  CHECK(after.list().size() == 6);
  for (const auto& e : fs::recursive_directory_iterator(dir.path))
    CHECK_FALSE(e.path().filename().string().ends_with(".lock"));
}

TEST_CASE("a voice removed while it is being encoded is not stored afterwards") {
  TempDir dir;
  VoiceCache voices(voices_at(dir.path));
  const VoiceKey bob{"fish", "Bob", "1", "codes"};

  // The encode of bob starts (generation taken), bob is removed, the encode finishes: refused.
  const std::uint64_t before = voices.generation("bob");
  CHECK_FALSE(voices.clear_voice("BOB"));  // nothing stored yet; the removal still counts
  CHECK_FALSE(voices.put_if_current(bob, fake_artifact("b1"), before).has_value());
  CHECK(voices.get(bob) == nullptr);
  CHECK(voices.list("bob").empty());
  CHECK(voices.voice_count() == 0);

  // Another voice's removal, or none, leaves bob's generation as it was: stored.
  const std::uint64_t now = voices.generation("bob");
  CHECK(now != before);
  voices.clear_voice("alice");
  const std::optional<bool> stored = voices.put_if_current(bob, fake_artifact("b1"), now);
  REQUIRE(stored.has_value());
  CHECK(*stored);  // written to disk
  CHECK(*voices.get(bob) == fake_artifact("b1"));

  // clear() removes every voice: an encode begun before it is refused too.
  const std::uint64_t g = voices.generation("bob");
  voices.clear();
  CHECK_FALSE(voices.put_if_current(bob, fake_artifact("b2"), g).has_value());
  CHECK(voices.get(bob) == nullptr);
}
