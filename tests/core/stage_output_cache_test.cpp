#include <catch2/catch.hpp>

#include <string>

#include "core/error.hpp"
#include "core/stage_output_cache.hpp"

using Cache = refenc::StageOutputCache<std::string, int>;

namespace {
Cache::Value v(int x) { return std::make_shared<const int>(x); }
}  // namespace

TEST_CASE("cache: rejects zero capacities") {
  CHECK_THROWS_AS(Cache(0, 10), refenc::Error);
  CHECK_THROWS_AS(Cache(10, 0), refenc::Error);
}

TEST_CASE("cache: evicts least recently used by item count") {
  Cache c(2, 1000);
  c.put("a", v(1), 10);
  c.put("b", v(2), 10);
  REQUIRE(c.get("a"));  // a is now most recent
  c.put("c", v(3), 10);
  CHECK(c.contains("a"));
  CHECK_FALSE(c.contains("b"));
  CHECK(c.contains("c"));
  CHECK(c.evictions() == 1);
  CHECK(c.size() == 2);
}

TEST_CASE("cache: evicts oldest first by bytes, counting each eviction") {
  Cache c(100, 100);
  c.put("a", v(1), 40);
  c.put("b", v(2), 40);
  c.put("c", v(3), 40);  // 120 > 100: a goes
  CHECK_FALSE(c.contains("a"));
  CHECK(c.bytes() == 80);
  c.put("d", v(4), 100);  // needs everything
  CHECK(c.size() == 1);
  CHECK(c.bytes() == 100);
  CHECK(c.evictions() == 3);
  CHECK(c.recount_bytes() == c.bytes());
}

TEST_CASE("cache: put replaces without double-counting, and never stores an oversize value") {
  Cache c(10, 100);
  c.put("a", v(1), 30);
  c.put("a", v(2), 50);
  CHECK(c.size() == 1);
  CHECK(c.bytes() == 50);
  CHECK(*c.get("a") == 2);
  CHECK_FALSE(c.put("a", v(3), 101));
  CHECK_FALSE(c.contains("a"));  // the stale value is gone too
  CHECK(c.bytes() == 0);
  CHECK(c.evictions() == 0);
}

TEST_CASE("cache: a value survives eviction while a reader holds it") {
  Cache c(1, 100);
  c.put("a", v(7), 1);
  Cache::Value held = c.get("a");
  c.put("b", v(8), 1);
  CHECK_FALSE(c.contains("a"));
  CHECK(*held == 7);
}
