#include <catch2/catch.hpp>

#include <barrier>
#include <future>
#include <thread>
#include <vector>

#include "fake_hook.hpp"

using namespace refenc;
using namespace refenc::test;
using namespace std::chrono_literals;

namespace {
std::shared_ptr<FakeHook> make_hook() { return std::make_shared<FakeHook>(); }
}  // namespace

TEST_CASE("service: rejects capacities and timeouts below 1 at construction") {
  CHECK_THROWS_AS(Service(make_hook(), {.max_items = 0}), Error);
  CHECK_THROWS_AS(Service(make_hook(), {.max_bytes = 0}), Error);
  CHECK_THROWS_AS(Service(make_hook(), {.timeout = 0ms}), Error);
  CHECK_THROWS_AS(Service(make_hook(), {.max_batch_size = 0}), Error);
  CHECK_THROWS_AS(Service(nullptr), Error);
  try {
    Service s(make_hook(), {.max_items = 0});
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::config);
  }
}

TEST_CASE("service: defaults follow the seed") {
  Service s(make_hook());
  CHECK(s.options().max_items == 256);
  CHECK(s.options().max_bytes == 64u << 20);
  CHECK(s.options().timeout == 130s);
  CHECK_FALSE(s.batching());
}

TEST_CASE("service: same-key single-flight with 8 threads encodes once") {
  auto hook = make_hook();
  Service s(hook);
  std::latch entered(1), release(1);
  Req leader{.key = 1, .entered = &entered, .release = &release};
  std::vector<std::future<Artifact>> results;
  results.push_back(std::async(std::launch::async, [&] { return s.get_or_encode(leader); }));
  entered.wait();  // the leader is inside encode_one
  for (int i = 0; i < 7; ++i)
    results.push_back(std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 1}); }));
  wait_until([&] { return s.stats().merged == 7; });
  release.count_down();
  std::vector<Artifact> got;
  for (auto& f : results) got.push_back(f.get());
  CHECK(hook->encodes(1) == 1);
  for (auto& a : got) CHECK(a == Artifact(4, 1));
  for (std::size_t i = 1; i < got.size(); ++i) CHECK(got[i].data() != got[0].data());  // caller-owned
  auto st = s.stats();
  CHECK(st.misses == 1);
  CHECK(st.merged == 7);
  CHECK(st.hits == 0);
  CHECK(st.entries == 1);
  CHECK(st.bytes == 16);
}

TEST_CASE("service: a hit returns a caller-owned copy") {
  Service s(make_hook());
  Artifact a = s.get_or_encode(Req{.key = 3});
  a[0] = 99;
  Artifact b = s.get_or_encode(Req{.key = 3});
  Artifact c = s.get_or_encode(Req{.key = 3});
  CHECK(b == Artifact(4, 3));
  CHECK(b.data() != c.data());
  CHECK(s.stats().hits == 2);
  CHECK(s.stats().misses == 1);
}

TEST_CASE("service: uncacheable inputs bypass the cache and single-flight") {
  auto hook = make_hook();
  Service s(hook);
  std::latch entered(2), release(1);
  auto f1 = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 5, .cacheable = false, .entered = &entered, .release = &release});
  });
  auto f2 = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 5, .cacheable = false, .entered = &entered, .release = &release});
  });
  entered.wait();  // both encode at once: no single-flight
  release.count_down();
  CHECK(f1.get() == Artifact(4, 5));
  CHECK(f2.get() == Artifact(4, 5));
  CHECK(hook->encodes(5) == 2);
  auto st = s.stats();
  CHECK(st.uncacheable == 2);
  CHECK(st.misses == 0);
  CHECK(st.entries == 0);
}

TEST_CASE("service: a failure reaches every waiter, is not cached, and the next call retries") {
  auto hook = make_hook();
  Service s(hook);
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 2, .fail = true, .entered = &entered, .release = &release}, "leader");
  });
  entered.wait();
  std::vector<std::future<Artifact>> followers;
  for (int i = 0; i < 4; ++i)
    followers.push_back(std::async(std::launch::async,
                                   [&, i] { return s.get_or_encode(Req{.key = 2}, "follower " + std::to_string(i)); }));
  wait_until([&] { return s.stats().merged == 4; });
  release.count_down();

  std::vector<std::string> messages;
  try {
    leader.get();
    FAIL("leader should throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::encode);
    CHECK(std::string(e.what()) == "leader: encoder exploded on 2");
  }
  for (int i = 0; i < 4; ++i) {
    try {
      followers[i].get();
      FAIL("follower should throw");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::encode);
      CHECK(std::string(e.what()) == "follower " + std::to_string(i) + ": encoder exploded on 2");
    }
  }
  auto st = s.stats();
  CHECK(st.failed == 1);
  CHECK(st.entries == 0);
  // Not cached: the next call leads a new encode, which succeeds.
  CHECK(s.get_or_encode(Req{.key = 2}) == Artifact(4, 2));
  CHECK(hook->encodes(2) == 2);
  CHECK(s.stats().misses == 2);
}

TEST_CASE("service: each waiter gets its own exception object") {
  Service s(make_hook());
  std::latch entered(1), release(1);
  std::exception_ptr p1, p2;
  auto t1 = std::async(std::launch::async, [&] {
    try {
      s.get_or_encode(Req{.key = 8, .fail = true, .entered = &entered, .release = &release});
    } catch (...) {
      p1 = std::current_exception();
    }
  });
  entered.wait();
  auto t2 = std::async(std::launch::async, [&] {
    try {
      s.get_or_encode(Req{.key = 8});
    } catch (...) {
      p2 = std::current_exception();
    }
  });
  wait_until([&] { return s.stats().merged == 1; });
  release.count_down();
  t1.get();
  t2.get();
  REQUIRE(p1);
  REQUIRE(p2);
  const Error* e1 = nullptr;
  const Error* e2 = nullptr;
  try {
    std::rethrow_exception(p1);
  } catch (const Error& e) {
    e1 = &e;
  }
  try {
    std::rethrow_exception(p2);
  } catch (const Error& e) {
    e2 = &e;
  }
  CHECK(e1 != e2);
}

TEST_CASE("service: bad input is refused before any encode, with its kind") {
  auto hook = make_hook();
  Service s(hook);
  try {
    s.get_or_encode(Req{.key = 4, .bad_input = true}, "clip.wav");
    FAIL("should throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::bad_input);
    CHECK(std::string(e.what()) == "clip.wav: unreadable clip 4");
  }
  CHECK(hook->total_encodes() == 0);
  CHECK(s.stats().misses == 0);
}

TEST_CASE("service: an oversize artifact reaches the leader and all followers but is never cached") {
  auto hook = make_hook();
  Service s(hook, {.max_bytes = 64});
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 6, .size = 100, .entered = &entered, .release = &release});
  });
  entered.wait();
  std::vector<std::future<Artifact>> followers;
  for (int i = 0; i < 3; ++i)
    followers.push_back(std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 6, .size = 100}); }));
  wait_until([&] { return s.stats().merged == 3; });
  release.count_down();
  CHECK(leader.get() == Artifact(100, 6));
  for (auto& f : followers) CHECK(f.get() == Artifact(100, 6));
  auto st = s.stats();
  CHECK(st.entries == 0);
  CHECK(st.bytes == 0);
  CHECK(st.oversize == 1);
  s.get_or_encode(Req{.key = 6, .size = 100});
  CHECK(hook->encodes(6) == 2);
}

TEST_CASE("service: LRU eviction by bytes and by items") {
  SECTION("bytes") {
    Service s(make_hook(), {.max_bytes = 40});  // two 16-byte artifacts fit, three do not
    s.get_or_encode(Req{.key = 1});
    s.get_or_encode(Req{.key = 2});
    s.get_or_encode(Req{.key = 1});  // 1 most recent
    s.get_or_encode(Req{.key = 3});  // evicts 2
    auto st = s.stats();
    CHECK(st.entries == 2);
    CHECK(st.bytes == 32);
    CHECK(st.evictions == 1);
    s.get_or_encode(Req{.key = 1});
    CHECK(s.stats().hits == 2);
    s.get_or_encode(Req{.key = 2});
    CHECK(s.stats().misses == 4);
  }
  SECTION("items") {
    Service s(make_hook(), {.max_items = 2});
    for (int k : {1, 2, 3}) s.get_or_encode(Req{.key = k});
    auto st = s.stats();
    CHECK(st.entries == 2);
    CHECK(st.evictions == 1);
    s.get_or_encode(Req{.key = 1});
    CHECK(s.stats().misses == 4);
  }
}

TEST_CASE("service: revalidate false returns the result but does not cache it") {
  auto hook = make_hook();
  Service s(hook);
  CHECK(s.get_or_encode(Req{.key = 9, .revalidate_ok = false}) == Artifact(4, 9));
  CHECK(s.stats().entries == 0);
  CHECK(s.get_or_encode(Req{.key = 9}) == Artifact(4, 9));
  CHECK(hook->encodes(9) == 2);
  CHECK(s.stats().entries == 1);
}

TEST_CASE("service: revalidate throwing releases followers at once and leaves no in-flight entry") {
  auto hook = make_hook();
  Service s(hook, {.timeout = 3600s});  // a stranded follower would hang the test, not time out
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 10, .revalidate_throws = true, .entered = &entered, .release = &release});
  });
  entered.wait();
  auto follower = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 10}); });
  wait_until([&] { return s.stats().merged == 1; });
  release.count_down();
  CHECK_THROWS_AS(leader.get(), Error);
  try {
    follower.get();
    FAIL("follower should throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(std::string(e.what()) == "file vanished: 10");
  }
  CHECK(s.stats().failed == 1);
  // No in-flight entry left: the next call leads (a miss), not merges.
  CHECK(s.get_or_encode(Req{.key = 10}) == Artifact(4, 10));
  CHECK(s.stats().misses == 2);
  CHECK(s.stats().merged == 1);
}

TEST_CASE("service: follower timeout leaves the leader's flight intact; the next call is a hit") {
  auto hook = make_hook();
  Service s(hook, {.timeout = 1ms});
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async,
                           [&] { return s.get_or_encode(Req{.key = 11, .entered = &entered, .release = &release}); });
  entered.wait();
  try {
    s.get_or_encode(Req{.key = 11}, "impatient");
    FAIL("follower should time out");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::timeout);
    CHECK(std::string(e.what()).rfind("impatient: ", 0) == 0);
  }
  auto st = s.stats();
  CHECK(st.timeouts == 1);
  CHECK(st.failed == 0);
  release.count_down();
  CHECK(leader.get() == Artifact(4, 11));
  CHECK(s.get_or_encode(Req{.key = 11}) == Artifact(4, 11));
  CHECK(s.stats().hits == 1);
  CHECK(hook->encodes(11) == 1);
}

TEST_CASE("service: back-to-back misses of one key never double-count bytes") {
  auto hook = make_hook();
  Service s(hook);
  // revalidate false then true, then a clear and a re-encode: bytes must always equal one entry.
  s.get_or_encode(Req{.key = 12, .revalidate_ok = false});
  s.get_or_encode(Req{.key = 12});
  CHECK(s.stats().bytes == 16);
  s.clear();
  s.get_or_encode(Req{.key = 12, .size = 8});
  CHECK(s.stats().bytes == 32);
  CHECK(s.stats().entries == 1);
}

TEST_CASE("service: the trace records outcome and timestamps") {
  Service s(make_hook());
  RequestTrace t;
  s.get_or_encode(Req{.key = 13}, "", &t);
  CHECK(t.outcome == RequestOutcome::encoded);
  CHECK(t.cached);
  CHECK(t.key == FakeHook::key_of(13));
  CHECK(t.start <= t.normalized);
  CHECK(t.normalized <= t.keyed);
  CHECK(t.keyed <= t.encode_start);
  CHECK(t.encode_start <= t.encode_end);
  CHECK(t.encode_end <= t.end);
  CHECK(t.stored_bytes == s.stats().bytes);
  CHECK(t.stored_bytes > 0);
  s.get_or_encode(Req{.key = 13}, "", &t);
  CHECK(t.outcome == RequestOutcome::hit);
  CHECK(t.stored_bytes == s.stats().bytes);  // a hit reports the stored size too
  CHECK_THROWS(s.get_or_encode(Req{.key = 14, .fail = true}, "", &t));
  CHECK(t.outcome == RequestOutcome::failed);
  s.get_or_encode(Req{.key = 15, .cacheable = false}, "", &t);
  CHECK(t.outcome == RequestOutcome::uncacheable);
  CHECK_FALSE(t.key);
}

TEST_CASE("service: stats snapshots subtract counters and keep gauges") {
  Service s(make_hook());
  s.get_or_encode(Req{.key = 1});
  auto before = s.stats();
  s.get_or_encode(Req{.key = 1});
  s.get_or_encode(Req{.key = 2});
  auto delta = s.stats().minus(before);
  CHECK(delta.hits == 1);
  CHECK(delta.misses == 1);
  CHECK(delta.entries == 2);
  CHECK(delta.bytes == 32);
  CHECK((s.stats() - before).hits == 1);
}

TEST_CASE("service: a counter smaller in the later snapshot subtracts to 0, never wraps") {
  ServiceStats earlier, later;
  earlier.hits = 10;
  earlier.load_ns = 5;
  earlier.batch_sizes[3] = 2;
  earlier.tier.disk_hits = 4;
  later.hits = 3;  // e.g. a service restarted between the snapshots
  later.misses = 2;
  later.entries = 1;
  const ServiceStats d = later.minus(earlier);
  CHECK(d.hits == 0);
  CHECK(d.load_ns == 0);
  CHECK(d.batch_sizes[3] == 0);
  CHECK(d.tier.disk_hits == 0);
  CHECK(d.misses == 2);
  CHECK(d.entries == 1);
}

TEST_CASE("service: load and encode times, and the mean miss penalty") {
  auto hook = make_hook();
  Service s(hook);
  CHECK(s.stats().mean_miss_penalty_ns() == 0);
  s.get_or_encode(Req{.key = 1});
  s.get_or_encode(Req{.key = 2});
  CHECK_THROWS(s.get_or_encode(Req{.key = 3, .fail = true}));
  s.get_or_encode(Req{.key = 1});                      // a hit: no load
  s.get_or_encode(Req{.key = 4, .cacheable = false});  // an encode but no load
  const auto st = s.stats();
  CHECK(st.loads == 3);  // failed loads count, as in Caffeine's load count
  CHECK(st.load_ns > 0);
  CHECK(st.encode_ns > 0);
  CHECK(st.mean_miss_penalty_ns() == st.load_ns / 3);
  bool listed = false;
  for (const auto& [name, value] : st.fields())
    if (name == "mean_miss_penalty_ns") listed = value == st.mean_miss_penalty_ns();
  CHECK(listed);
}

TEST_CASE("service: close makes later calls fail with a closed error") {
  Service s(make_hook());
  s.close();
  try {
    s.get_or_encode(Req{.key = 1});
    FAIL("should throw");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::closed);
  }
}

TEST_CASE("service: second tier is consulted by the leader, written through, and promoted") {
  auto tier = std::make_shared<MemoryTier>();
  auto hook = make_hook();
  {
    Service s(hook, {}, tier);
    RequestTrace t;
    s.get_or_encode(Req{.key = 1}, "", &t);
    CHECK(t.outcome == RequestOutcome::encoded);
    CHECK(s.stats().tier.disk_writes == 1);
    CHECK(s.stats().tier.disk_misses == 1);
    s.get_or_encode(Req{.key = 2, .revalidate_ok = false});  // not cached: not written either
    CHECK(s.stats().tier.disk_writes == 1);
  }
  Service fresh(hook, {}, tier);  // a "restart" over the same tier
  RequestTrace t;
  CHECK(fresh.get_or_encode(Req{.key = 1}, "", &t) == Artifact(4, 1));
  CHECK(t.outcome == RequestOutcome::disk_hit);
  CHECK(hook->encodes(1) == 1);
  fresh.get_or_encode(Req{.key = 1}, "", &t);
  CHECK(t.outcome == RequestOutcome::hit);  // promoted into memory
  CHECK(fresh.stats().tier.disk_hits == 1);
}
