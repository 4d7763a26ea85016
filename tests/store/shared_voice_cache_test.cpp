// Registered voices shared through Redis: a change on one replica reaches another's memory.
#include <catch2/catch.hpp>

#include "redis_server.hpp"
#include "store/redis_tier.hpp"
#include "store/shared_voice_cache.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;

TEST_CASE("shared voices: add, replace and remove on one replica reach another replica's memory") {
  if (!redis_server_available()) {
    WARN("redis-server is not installed (scripts/setup.sh --test): test skipped");
    return;
  }
  RedisServer redis;
  TempDir root_a, root_b;
  auto shared_a = open_redis_tier({.url = redis.url()});
  auto shared_b = open_redis_tier({.url = redis.url()});
  SharedVoiceCache a(std::make_shared<VoiceCache>(VoiceCacheOptions{.root = root_a.path.string()}), shared_a);
  SharedVoiceCache b(std::make_shared<VoiceCache>(VoiceCacheOptions{.root = root_b.path.string()}), shared_b);
  const VoiceKey alice{"fish-s2-pro", "Alice", "1", "codes"};

  CHECK(b.get(alice) == nullptr);
  REQUIRE(a.put(alice, fake_artifact("first take").compacted()));
  REQUIRE(b.shared_list().size() == 1);
  CHECK(b.shared_list()[0].canonical() == alice.canonical());
  auto got = b.get(alice);  // from Redis, into b's memory and disk
  REQUIRE(got);
  CHECK(*got == fake_artifact("first take").compacted());
  CHECK(b.local().get(alice) != nullptr);

  // Replaced on a: b's memory copy is stale and is refreshed on the next read.
  REQUIRE(a.put(alice, fake_artifact("second take").compacted()));
  got = b.get(alice);
  REQUIRE(got);
  CHECK(*got == fake_artifact("second take").compacted());
  CHECK(*b.local().get(alice) == fake_artifact("second take").compacted());

  // Removed on a: b drops its copy (memory and disk).
  CHECK(a.clear_voice("ALICE"));
  CHECK(b.get(alice) == nullptr);
  CHECK(b.local().get(alice) == nullptr);
  CHECK(b.local().list("alice").empty());

  // A voice registered on b alone while Redis was away is not removed by a read.
  b.local().put({"qwen3-tts", "bob", "1", "prompt"}, fake_artifact("bob").compacted());
  CHECK(b.get({"qwen3-tts", "bob", "1", "prompt"}) != nullptr);

  // Another deployment prefix does not see these voices; a corrupt value is deleted, not returned.
  auto other = open_redis_tier({.url = redis.url(), .prefix = "other"});
  SharedVoiceCache c(std::make_shared<VoiceCache>(VoiceCacheOptions{.persist = false}), other);
  REQUIRE(a.put(alice, fake_artifact("third take").compacted()));
  CHECK(c.get(alice) == nullptr);
  auto keys = a.shared_keys("alice");
  REQUIRE(keys.size() == 1);
  REQUIRE(shared_a->client().command({"HSET", "refenc:voices:v1:voice:alice", keys[0].canonical(), "garbage"}));
  REQUIRE(shared_a->client().command({"INCR", "refenc:voices:v1:generation"}));
  SharedVoiceCache d(std::make_shared<VoiceCache>(VoiceCacheOptions{.persist = false}), shared_b);
  CHECK(d.get(alice) == nullptr);
  CHECK(d.corrupt() == 1);
  CHECK(d.shared_keys("alice").empty());

  // Redis gone: the local cache answers alone.
  redis.kill_now();
  CHECK(b.get({"qwen3-tts", "bob", "1", "prompt"}) != nullptr);
}
