// The miss-ratio curve against LRUs that replay the same trace: a brute-force list LRU bounded by
// bytes and items, and the memory tier's own StageOutputCache.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <list>
#include <random>
#include <string>
#include <unordered_map>

#include "core/stage_output_cache.hpp"
#include "profile/stats/miss_ratio_curve.hpp"

using namespace refenc::profile;

namespace {

constexpr std::size_t no_item_bound = std::numeric_limits<std::size_t>::max();

/// Hit ratio of a list LRU bounded by bytes and items; an entry larger than max_bytes never enters.
double list_lru(const std::vector<TraceAccess>& trace, std::uint64_t max_bytes, std::size_t max_items) {
  std::list<std::string> order;
  std::unordered_map<std::string, std::pair<std::list<std::string>::iterator, std::uint64_t>> index;
  std::uint64_t total = 0;
  std::size_t hits = 0;
  for (const auto& a : trace) {
    if (auto it = index.find(a.key); it != index.end()) {
      ++hits;
      order.splice(order.begin(), order, it->second.first);
      continue;
    }
    if (a.bytes > max_bytes) continue;
    order.push_front(a.key);
    index[a.key] = {order.begin(), a.bytes};
    total += a.bytes;
    while (total > max_bytes || index.size() > max_items) {
      const std::string k = order.back();
      total -= index[k].second;
      index.erase(k);
      order.pop_back();
    }
  }
  return static_cast<double>(hits) / static_cast<double>(trace.size());
}

/// Hit ratio of the memory tier's LRU driven the way the service drives it: get, and put on a miss.
double stage_cache(const std::vector<TraceAccess>& trace, std::uint64_t max_bytes, std::size_t max_items) {
  refenc::StageOutputCache<std::string, int> cache(std::min<std::size_t>(max_items, 1u << 30),
                                                   static_cast<std::size_t>(max_bytes));
  std::size_t hits = 0;
  for (const auto& a : trace) {
    if (cache.get(a.key)) {
      ++hits;
      continue;
    }
    cache.put(a.key, std::make_shared<const int>(1), static_cast<std::size_t>(a.bytes));
  }
  return static_cast<double>(hits) / static_cast<double>(trace.size());
}

/// `n` requests over `keys` keys with Zipf(s) popularity, seeded.
std::vector<TraceAccess> zipf_trace(std::size_t n, int keys, double s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> w;
  for (int i = 1; i <= keys; ++i) w.push_back(1.0 / std::pow(i, s));
  std::discrete_distribution<int> pick(w.begin(), w.end());
  std::vector<TraceAccess> trace;
  for (std::size_t i = 0; i < n; ++i) trace.push_back({"k" + std::to_string(pick(rng)), 1000});
  return trace;
}

/// The same trace with sizes from 500 to 1499 bytes, fixed per key.
std::vector<TraceAccess> varying_sizes(std::vector<TraceAccess> trace) {
  for (auto& a : trace) a.bytes = 500 + std::hash<std::string>{}(a.key) % 1000;
  return trace;
}

}  // namespace

TEST_CASE("miss-ratio curve: the header's example") {
  std::vector<TraceAccess> trace = {{"a", 100}, {"b", 100}, {"a", 100}};
  MissRatioCurve mrc = miss_ratio_curve(trace);
  CHECK(mrc.requests() == 3);
  CHECK(mrc.distinct() == 2);
  CHECK(mrc.working_set_bytes() == 200);
  CHECK(mrc.hit_ratio(200) == Approx(1.0 / 3));
  CHECK(mrc.hit_ratio(199) == 0);
  CHECK(mrc.hit_ratio(100) == 0);
  CHECK(mrc.hit_ratio(1000, 1) == 0);
  CHECK(mrc.hit_ratio(1000, 2) == Approx(1.0 / 3));
  auto pts = mrc.points(2);
  REQUIRE(pts.size() == 2);
  CHECK(pts[0] == std::pair<std::uint64_t, double>{100, 0.0});
  CHECK(pts[1].first == 200);
  CHECK(pts[1].second == Approx(1.0 / 3));
  CHECK(miss_ratio_curve({}).hit_ratio(100) == 0);
  CHECK(miss_ratio_curve({}).points(4).empty());
}

TEST_CASE("miss-ratio curve: exact against a brute-force LRU on a Zipf trace of equal sizes") {
  auto trace = zipf_trace(5000, 200, 1.1, 3);
  MissRatioCurve mrc = miss_ratio_curve(trace);
  for (auto [bytes, hit] : mrc.points(8)) CHECK(hit == Approx(list_lru(trace, bytes, no_item_bound)).margin(1e-12));
  for (std::size_t items : {1u, 5u, 20u, 50u}) {
    CHECK(mrc.hit_ratio(std::numeric_limits<std::uint64_t>::max(), items) ==
          Approx(list_lru(trace, std::numeric_limits<std::uint64_t>::max(), items)).margin(1e-12));
    CHECK(mrc.hit_ratio(30'000, items) == Approx(list_lru(trace, 30'000, items)).margin(1e-12));
  }
  // The last point holds the working set: only compulsory misses remain.
  CHECK(mrc.points(8).back().second == Approx(1.0 - static_cast<double>(mrc.distinct()) / 5000));
}

TEST_CASE("miss-ratio curve: against a brute-force LRU with sizes varying by key") {
  auto trace = varying_sizes(zipf_trace(5000, 200, 1.1, 3));
  MissRatioCurve mrc = miss_ratio_curve(trace);
  for (auto [bytes, hit] : mrc.points(6)) {
    const double lru = list_lru(trace, bytes, no_item_bound);
    CHECK(hit >= lru - 1e-12);               // an upper bound...
    CHECK(hit == Approx(lru).margin(0.02));  // ...within 2 points
  }
}

TEST_CASE("miss-ratio curve: the memory tier's StageOutputCache hits as predicted") {
  SECTION("equal sizes: exact") {
    auto trace = zipf_trace(5000, 200, 1.1, 11);
    MissRatioCurve mrc = miss_ratio_curve(trace);
    for (auto [bytes, hit] : mrc.points(8))
      CHECK(hit == Approx(stage_cache(trace, bytes, no_item_bound)).margin(1e-12));
    for (std::size_t items : {1u, 8u, 40u})
      CHECK(mrc.hit_ratio(50'000, items) == Approx(stage_cache(trace, 50'000, items)).margin(1e-12));
  }
  SECTION("sizes varying by key: within 2 points") {
    auto trace = varying_sizes(zipf_trace(5000, 200, 0.9, 12));
    MissRatioCurve mrc = miss_ratio_curve(trace);
    for (auto [bytes, hit] : mrc.points(8)) CHECK(hit == Approx(stage_cache(trace, bytes, no_item_bound)).margin(0.02));
  }
}
