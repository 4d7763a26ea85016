#include <catch2/catch.hpp>

#include <filesystem>

#include "store/voice_cache.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;
namespace fs = std::filesystem;

namespace {
VoiceCacheOptions at(const fs::path& root) {
  VoiceCacheOptions o;
  o.root = root.string();
  return o;
}
}  // namespace

TEST_CASE("voice names are case-insensitive and validated") {
  TempDir dir;
  VoiceCache voices(at(dir.path));
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
    VoiceCache voices(at(dir.path));
    CHECK(voices.put({"fish", "alice", "1", "codes"}, fake_artifact("a1")));
    CHECK(voices.put({"fish", "alice", "2", "codes"}, fake_artifact("a2")));
    CHECK(voices.put({"qwen", "Alice", "1", "speaker"}, fake_artifact("aq")));
    CHECK(voices.put({"fish", "bob", "1", "codes"}, fake_artifact("b1")));
  }
  VoiceCache voices(at(dir.path));
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
  VoiceCache other(at(dir.path));
  CHECK_FALSE(other.get({"fish", "alice", "2", "codes"}));
  CHECK(other.get({"fish", "bob", "1", "codes"}));

  voices.put({"fish", "alice", "3", "codes"}, fake_artifact("a3"));  // re-registered, then cleared again
  CHECK(voices.clear_voice("alice"));
  CHECK(voices.stats().delete_invalidation_counter == 3);

  voices.clear();
  CHECK(voices.list().empty());
  CHECK(voices.stats().entries == 0);
  CHECK_FALSE(other.get({"fish", "bob", "1", "codes"}) == nullptr);  // other's memory still has it
  VoiceCache third(at(dir.path));
  CHECK_FALSE(third.get({"fish", "bob", "1", "codes"}));
}

TEST_CASE("the voice memory tier is byte-bounded LRU") {
  VoiceCacheOptions o;
  o.persist = false;
  o.max_bytes = fake_artifact("v0").byte_size() * 3;
  VoiceCache voices(o);
  CHECK_FALSE(voices.persistent());
  for (int i = 0; i < 3; ++i) voices.put({"fish", "v" + std::to_string(i), "1", "codes"}, fake_artifact("v" + std::to_string(i)));
  REQUIRE(voices.get({"fish", "v0", "1", "codes"}));  // v0 is now the most recent
  voices.put({"fish", "v3", "1", "codes"}, fake_artifact("v3"));
  auto s = voices.stats();
  CHECK(s.eviction_count == 1);
  CHECK(s.entries == 3);
  CHECK(s.memory_bytes <= s.max_bytes);
  CHECK(s.max_bytes == o.max_bytes);
  CHECK(voices.get({"fish", "v0", "1", "codes"}));
  CHECK_FALSE(voices.get({"fish", "v1", "1", "codes"}));
  CHECK(voices.list().size() == 3);
}

TEST_CASE("a corrupt voice entry is a miss and is deleted") {
  TempDir dir;
  VoiceCache voices(at(dir.path));
  voices.put({"fish", "carol", "1", "codes"}, fake_artifact("c"));
  auto entries = voices.list();
  REQUIRE(entries.size() == 1);
  fs::resize_file(entries[0].path, 7);
  VoiceCache fresh(at(dir.path));
  CHECK_NOTHROW(fresh.get({"fish", "carol", "1", "codes"}));
  CHECK_FALSE(fs::exists(entries[0].path));
}

TEST_CASE("an unusable root makes the voice cache memory-only with one warning") {
  TempDir dir;
  write_bytes(dir.path / "file", {'x'});
  LogCapture logs;
  VoiceCache voices(at(dir.path / "file"));
  CHECK_FALSE(voices.persistent());
  CHECK_FALSE(voices.put({"fish", "dan", "1", "codes"}, fake_artifact("d")));
  CHECK(voices.get({"fish", "dan", "1", "codes"}));
  CHECK(logs.count() == 1);
}
