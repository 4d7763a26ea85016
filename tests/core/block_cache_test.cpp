#include <catch2/catch.hpp>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/block_cache.hpp"

using refenc::BlockCache;

namespace {
constexpr std::size_t MiB = std::size_t{1} << 20;
}

TEST_CASE("block cache: size classes are quarter steps of a power of two, at most 25% slack") {
  CHECK(BlockCache::size_class(1 * MiB) == 1 * MiB);
  CHECK(BlockCache::size_class(1 * MiB + 1) == 1 * MiB + MiB / 4);
  CHECK(BlockCache::size_class(1 * MiB + MiB / 4) == 1 * MiB + MiB / 4);
  CHECK(BlockCache::size_class(2 * MiB - 1) == 2 * MiB);
  CHECK(BlockCache::size_class(3 * MiB + 1) == 3 * MiB + MiB / 2);
  CHECK(BlockCache::size_class(0) == 4);
  std::size_t previous = 0;
  for (std::size_t n = 5; n < 64 * MiB; n = n * 9 / 8 + 7) {
    const std::size_t c = BlockCache::size_class(n);
    INFO("n = " << n);
    CHECK(c >= n);
    CHECK(c - n <= n / 4);
    CHECK(c >= previous);
    CHECK(BlockCache::size_class(c) == c);  // a class is its own class
    previous = c;
  }
}

TEST_CASE("block cache: a freed block is handed back for the next request of its class") {
  BlockCache cache(64 * MiB);
  void* p = cache.allocate(5 * MiB);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % BlockCache::kAlignment == 0);
  std::memset(p, 0xab, 5 * MiB);  // usable to the last byte
  cache.deallocate(p);
  CHECK(cache.stats().cached_bytes == 5 * MiB);
  CHECK(cache.stats().cached_blocks == 1);

  void* q = cache.allocate(5 * MiB - 100);  // same class
  CHECK(q == p);
  const auto s = cache.stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.cached_bytes == 0);
  CHECK(s.cached_blocks == 0);

  void* r = cache.allocate(7 * MiB);  // another class: fresh
  CHECK(r != q);
  CHECK(cache.stats().misses == 2);
  cache.deallocate(q);
  cache.deallocate(r);
  CHECK(cache.stats().cached_bytes == 12 * MiB);
}

TEST_CASE("block cache: the most recently freed block of a class is reused first") {
  BlockCache cache(64 * MiB);
  void* a = cache.allocate(MiB);
  void* b = cache.allocate(MiB);
  cache.deallocate(a);
  cache.deallocate(b);
  CHECK(cache.allocate(MiB) == b);
  CHECK(cache.allocate(MiB) == a);
  cache.deallocate(a);
  cache.deallocate(b);
}

TEST_CASE("block cache: small blocks bypass the cache") {
  BlockCache cache(64 * MiB, 256 * 1024);
  void* p = cache.allocate(1000);
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(p) % BlockCache::kAlignment == 0);
  std::memset(p, 1, 1000);
  cache.deallocate(p);
  void* z = cache.allocate(0);  // a distinct, freeable block, as malloc gives
  CHECK(z != nullptr);
  cache.deallocate(z);
  cache.deallocate(nullptr);
  const auto s = cache.stats();
  CHECK(s.hits + s.misses == 0);
  CHECK(s.cached_blocks == 0);
}

TEST_CASE("block cache: past its bound it releases the least recently freed blocks") {
  BlockCache cache(3 * MiB);
  void* a = cache.allocate(MiB);
  void* b = cache.allocate(MiB + MiB / 4);
  void* c = cache.allocate(MiB + MiB / 2);
  cache.deallocate(a);  // 1 MiB kept
  cache.deallocate(b);  // 2.25 MiB
  CHECK(cache.stats().evictions == 0);
  cache.deallocate(c);  // 3.75 MiB: a, the oldest, goes
  auto s = cache.stats();
  CHECK(s.evictions == 1);
  CHECK(s.cached_bytes == 2 * MiB + 3 * MiB / 4);
  CHECK(s.cached_blocks == 2);

  const auto before = cache.stats();
  void* again_a = cache.allocate(MiB);  // its class was released: a miss
  void* again_b = cache.allocate(MiB + MiB / 4);
  const auto d = cache.stats().minus(before);
  CHECK(d.misses == 1);
  CHECK(d.hits == 1);
  CHECK(again_b == b);
  cache.deallocate(again_a);
  cache.deallocate(again_b);
  CHECK(cache.stats().cached_bytes <= 3 * MiB);
}

TEST_CASE("block cache: a block larger than the bound, or any block with a bound of 0, is never kept") {
  BlockCache small(2 * MiB);
  void* big = small.allocate(3 * MiB);
  small.deallocate(big);
  CHECK(small.stats().cached_blocks == 0);
  CHECK(small.stats().evictions == 0);

  BlockCache none(0);
  void* p = none.allocate(8 * MiB);
  none.deallocate(p);
  void* q = none.allocate(8 * MiB);
  none.deallocate(q);
  CHECK(none.stats().cached_blocks == 0);
  CHECK(none.stats().hits == 0);
}

TEST_CASE("block cache: concurrent allocate and free keep blocks private and the counts exact") {
  constexpr int kThreads = 8, kRounds = 300;
  const std::size_t bound = 24 * MiB;
  BlockCache cache(bound);
  std::barrier start(kThreads);
  std::atomic<int> corrupted{0};
  std::atomic<std::uint64_t> cacheable{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_int_distribution<std::size_t> size(200 * 1024, 3 * MiB);
      start.arrive_and_wait();
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      for (int i = 0; i < kRounds; ++i) {
        const std::size_t n = size(rng);
        if (n >= BlockCache::kDefaultMinBlock) ++cacheable;
        auto* p = static_cast<unsigned char*>(cache.allocate(n));
        std::memset(p, t + 1, n);
        held.emplace_back(p, n);
        if (held.size() > 2 || rng() % 2) {  // free one, checking nobody else wrote into it
          auto [q, m] = held.front();
          held.erase(held.begin());
          if (q[0] != t + 1 || q[m / 2] != t + 1 || q[m - 1] != t + 1) ++corrupted;
          cache.deallocate(q);
        }
      }
      for (auto [q, m] : held) cache.deallocate(q);
    });
  for (auto& th : threads) th.join();
  CHECK(corrupted == 0);
  const auto s = cache.stats();
  CHECK(s.cached_bytes <= bound);
  CHECK(s.hits > 0);
  // Every allocation of at least the minimum was a hit or a miss; the rest bypassed the cache.
  CHECK(s.hits + s.misses == cacheable.load());
}
