#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

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

TEST_CASE("cache: find is a use; eviction follows the order of last use exactly") {
  Cache c(3, 1000);
  c.put("a", v(1), 1);
  c.put("b", v(2), 1);
  c.put("c", v(3), 1);
  REQUIRE(c.find("a"));  // last uses now: b < c < a
  REQUIRE(c.find("b"));  //                 c < a < b
  REQUIRE(c.find("c"));  //                 a < b < c
  REQUIRE(c.find("a"));  //                 b < c < a
  CHECK(c.find("zz") == nullptr);
  c.put("d", v(4), 1);
  CHECK_FALSE(c.contains("b"));
  c.put("e", v(5), 1);
  CHECK_FALSE(c.contains("c"));
  c.put("f", v(6), 1);
  CHECK_FALSE(c.contains("a"));
  CHECK(c.contains("d"));
  CHECK(c.contains("e"));
  CHECK(c.contains("f"));
  CHECK(c.evictions() == 3);
  CHECK(**c.find("d") == 4);
}

TEST_CASE("cache: a put that evicts several entries takes them in order of last use") {
  Cache c(10, 100);
  for (const char* k : {"a", "b", "c", "d"}) c.put(k, v(0), 25);
  c.get("a");
  c.get("c");            // last uses: b < d < a < c
  c.put("e", v(5), 50);  // needs 50 bytes: b and d go
  CHECK_FALSE(c.contains("b"));
  CHECK_FALSE(c.contains("d"));
  CHECK(c.contains("a"));
  CHECK(c.contains("c"));
  CHECK(c.bytes() == 100);
  CHECK(c.recount_bytes() == 100);
}

TEST_CASE("cache: finds from many threads at once (no writer) are safe and all count as uses") {
  Cache c(4, 1000);
  for (const char* k : {"a", "b", "c", "d"}) c.put(k, v(k[0]), 1);
  std::vector<std::thread> pool;
  std::atomic<long> sum{0};
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      long local = 0;
      for (int i = 0; i < 2000; ++i) local += **c.find(std::string(1, static_cast<char>('a' + (i + t) % 3)));
      sum += local;
    });
  for (auto& th : pool) th.join();
  CHECK(sum.load() > 0);
  c.put("e", v(0), 1);  // d was never used after its put: it goes, not a/b/c
  CHECK_FALSE(c.contains("d"));
  CHECK(c.size() == 4);
}
