// The shared Redis tier against a real redis-server (started per test on a loopback port).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "redis_server.hpp"
#include "store/disk_tier.hpp"
#include "store/entry_format.hpp"
#include "store/redis_endpoint.hpp"
#include "store/redis_tier.hpp"
#include "store/tier_chain.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;
using namespace std::chrono_literals;

namespace {

#define REQUIRE_REDIS()                                                              \
  do {                                                                               \
    if (!redis_server_available()) {                                                 \
      WARN("redis-server is not installed (scripts/setup.sh --test): test skipped"); \
      return;                                                                        \
    }                                                                                \
  } while (0)

/// A FakeHook whose encodes take `delay` (so that replicas overlap).
struct SlowHook : FakeHook {
  std::chrono::milliseconds delay;
  explicit SlowHook(std::chrono::milliseconds d) : delay(d) {}
  Artifact encode_one(const std::string& s) override {
    std::this_thread::sleep_for(delay);
    return FakeHook::encode_one(s);
  }
};

RedisTierOptions fast(const std::string& url) {
  RedisTierOptions o;
  o.url = url;
  o.connect_timeout = 200ms;
  o.command_timeout = 200ms;
  return o;
}

std::shared_ptr<TierChain> chain(const TempDir& dir, std::shared_ptr<RedisTier> shared) {
  return std::make_shared<TierChain>(open_disk_tier({.root = dir.path.string()}), std::move(shared));
}

RequestOutcome outcome_of(FakeService& s, const std::string& text, Artifact* out = nullptr) {
  RequestTrace t;
  Artifact a = s.get_or_encode(text, {}, &t);
  if (out) *out = a;
  return t.outcome;
}

}  // namespace

TEST_CASE("redis endpoint: URL forms, environment password, redaction, loopback") {
  ::unsetenv(kSharedCachePasswordEnv);
  ::unsetenv(kSharedCacheUserEnv);
  RedisEndpoint e = RedisEndpoint::parse("redis://alice:p%40ss@10.1.2.3:6380/2");
  CHECK(e.host == "10.1.2.3");
  CHECK(e.port == 6380);
  CHECK(e.db == 2);
  CHECK(e.user == "alice");
  CHECK(e.password == "p@ss");
  CHECK(e.display() == "redis://alice:***@10.1.2.3:6380/2");
  CHECK_FALSE(e.is_loopback());
  CHECK(RedisEndpoint::parse("redis://localhost").port == 6379);
  CHECK(RedisEndpoint::parse("redis://127.0.0.7:1").is_loopback());
  CHECK(RedisEndpoint::parse("redis://[::1]:7000").is_loopback());
  ::setenv(kSharedCachePasswordEnv, "from-env", 1);
  CHECK(RedisEndpoint::parse("redis://127.0.0.1").password == "from-env");
  CHECK(RedisEndpoint::parse("redis://127.0.0.1", false).password.empty());
  ::unsetenv(kSharedCachePasswordEnv);
  for (const char* bad : {"http://x", "redis://", "redis://h:port", "redis://h:70000", "redis://h/x", "redis://h o"}) {
    try {
      RedisEndpoint::parse(bad);
      FAIL("accepted " << bad);
    } catch (const Error& err) {
      CHECK(err.kind() == ErrorKind::config);
    }
  }
  try {
    RedisEndpoint::parse("redis://user:topsecret@host:notaport");
    FAIL("accepted a bad port");
  } catch (const Error& err) {
    CHECK(std::string(err.what()).find("topsecret") == std::string::npos);
  }
  // A remote server without a password needs an explicit allowance; the prefix is restricted.
  CHECK_THROWS_AS(RedisTier(RedisTierOptions{.url = "redis://10.0.0.9:6379"}), Error);
  CHECK_NOTHROW(RedisTier(RedisTierOptions{.url = "redis://10.0.0.9:6379", .allow_insecure = true}));
  CHECK_NOTHROW(RedisTier(RedisTierOptions{.url = "redis://:pw@10.0.0.9:6379"}));
  CHECK_THROWS_AS(RedisTier(RedisTierOptions{.url = "redis://127.0.0.1", .prefix = "a:b"}), Error);
}

TEST_CASE("redis tier: a second replica with an empty disk gets a shared hit, then its disk has it") {
  REQUIRE_REDIS();
  RedisServer redis;
  TempDir disk_a, disk_b;
  auto hook_a = std::make_shared<FakeHook>();
  auto hook_b = std::make_shared<FakeHook>();
  FakeService a(hook_a, {}, chain(disk_a, open_redis_tier(fast(redis.url()))));
  Artifact first, second;
  CHECK(outcome_of(a, "alice", &first) == RequestOutcome::encoded);
  auto chain_b = chain(disk_b, open_redis_tier(fast(redis.url())));
  FakeService b(hook_b, {}, chain_b);
  CHECK(outcome_of(b, "alice", &second) == RequestOutcome::shared_hit);
  CHECK(second == first);
  CHECK(hook_b->encodes == 0);
  chain_b->flush();  // the disk is filled behind the request
  ServiceStats s = b.stats();
  CHECK(s.tier.shared_hits == 1);
  CHECK(s.tier.disk_misses == 1);
  CHECK(s.tier.disk_writes == 1);  // the shared hit filled the disk
  CHECK(s.tier.shared_writes == 0);
  CHECK(a.stats().tier.shared_writes == 1);
  // The filled disk answers without Redis.
  FakeService c(std::make_shared<FakeHook>(), {}, open_disk_tier({.root = disk_b.path.string()}));
  CHECK(outcome_of(c, "alice") == RequestOutcome::disk_hit);
  // A prefix is a separate deployment.
  auto other = fast(redis.url());
  other.prefix = "eu-2";
  FakeService d(std::make_shared<FakeHook>(), {}, open_redis_tier(other));
  CHECK(outcome_of(d, "alice") == RequestOutcome::encoded);
}

TEST_CASE("redis tier: corrupt, truncated, foreign and other-deployment values are deleted and recomputed") {
  REQUIRE_REDIS();
  RedisServer redis;
  auto tier = open_redis_tier(fast(redis.url()));
  RedisClient& r = tier->client();
  const ReferenceEncodeKey key = fake_key("bob");
  const std::string vkey = tier->value_key(key);
  const std::vector<char> good = encode_entry(key.canonical(), fake_artifact("bob").compacted());
  std::vector<char> flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  const std::vector<char> foreign = encode_entry(fake_key("carol").canonical(), fake_artifact("carol").compacted());
  const std::vector<char> old_format = encode_entry(key.canonical(), fake_artifact("bob").compacted(), 0);
  const std::vector<char> other_prefix =
      encode_entry("{\"deployment\":\"x\",\"key\":" + key.canonical() + "}", fake_artifact("bob").compacted());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"garbage", "this is not an entry at all"},
      {"truncated", std::string(good.data(), good.size() / 2)},
      {"bit flip", std::string(flipped.begin(), flipped.end())},
      {"another key's value", std::string(foreign.begin(), foreign.end())},
      {"older format", std::string(old_format.begin(), old_format.end())},
      {"another deployment's value", std::string(other_prefix.begin(), other_prefix.end())},
  };
  std::uint64_t corrupt = 0;
  for (const auto& [name, value] : cases) {
    SECTION(name) {
      REQUIRE(r.command({"SET", vkey, value})->is_ok());
      auto hook = std::make_shared<FakeHook>();
      FakeService s(hook, {}, tier);
      Artifact got;
      CHECK(outcome_of(s, "bob", &got) == RequestOutcome::encoded);
      CHECK(got == fake_artifact("bob"));
      CHECK(hook->encodes == 1);
      CHECK(tier->stats().shared_corrupt == corrupt + 1);
      // Recomputed and rewritten: the value is good now.
      auto back = r.command({"GET", vkey});
      REQUIRE(back);
      CHECK(back->str == std::string(good.begin(), good.end()));
      CHECK(tier->load(key) != nullptr);
    }
  }
  // A wrong-typed value (a list) is an error reply, a miss, never a throw.
  REQUIRE(r.command({"DEL", vkey}));
  REQUIRE(r.command({"RPUSH", vkey, "x"}));
  CHECK(tier->load(key) == nullptr);
}

TEST_CASE("redis tier: a wrong password fails nothing, warns once and never shows the password") {
  REQUIRE_REDIS();
  RedisServer redis({"--requirepass", "right-horse-battery"});
  LogCapture log;
  {
    auto tier = open_redis_tier(fast(redis.url(":wrong-staple-17")));
    auto hook = std::make_shared<FakeHook>();
    FakeService s(hook, {}, tier);
    for (int i = 0; i < 5; ++i) CHECK(outcome_of(s, "k" + std::to_string(i)) == RequestOutcome::encoded);
    CHECK(hook->encodes == 5);
    CHECK(tier->stats().shared_errors > 0);
    REQUIRE(log.count() == 1);
    CHECK(log.warnings[0].find("wrong-staple-17") == std::string::npos);
    CHECK(log.warnings[0].find("authentication refused") != std::string::npos);
    CHECK(log.warnings[0].find("***") != std::string::npos);
    CHECK(tier->display().find("wrong-staple") == std::string::npos);
  }
  // The right password from the environment.
  ::setenv(kSharedCachePasswordEnv, "right-horse-battery", 1);
  auto tier = open_redis_tier(fast(redis.url()));
  ::unsetenv(kSharedCachePasswordEnv);
  FakeService s(std::make_shared<FakeHook>(), {}, tier);
  CHECK(outcome_of(s, "k0") == RequestOutcome::encoded);
  CHECK(tier->stats().shared_writes == 1);
  CHECK(tier->load(fake_key("k0")) != nullptr);
}

TEST_CASE("redis tier: the server killed mid-run and restarted empty") {
  REQUIRE_REDIS();
  RedisServer redis;
  LogCapture log;
  TempDir disk;
  auto opts = fast(redis.url());
  auto tier = open_redis_tier(opts);
  auto hook = std::make_shared<FakeHook>();
  FakeService s(hook, {}, chain(disk, tier));
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, answered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const std::string text = "run" + std::to_string(i * 4 + t);  // always new: every request reaches Redis
        try {
          if (s.get_or_encode(text) != fake_artifact(text)) ++failures;
        } catch (...) {
          ++failures;
        }
        ++answered;
        if (i % 8 == 0) s.clear();  // keep the tiers behind memory busy
      }
    });
  std::this_thread::sleep_for(200ms);
  redis.kill_now();
  std::this_thread::sleep_for(300ms);
  const int during = answered;
  std::this_thread::sleep_for(300ms);
  CHECK(answered > during);  // requests go on while the server is down
  redis.start();             // empty
  const std::uint64_t writes_before = tier->stats().shared_writes;
  // The circuit probes again after its backoff (500 ms, then 1 s ...) and writes resume.
  for (int i = 0; i < 100 && tier->stats().shared_writes == writes_before; ++i) std::this_thread::sleep_for(50ms);
  stop = true;
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(tier->stats().shared_writes > writes_before);
  CHECK(tier->client().available());
  CHECK(log.count() == 1);
}

TEST_CASE("redis tier: stalls (DEBUG SLEEP, CLIENT PAUSE) cost at most the timeouts") {
  REQUIRE_REDIS();
  RedisServer redis;
  if (redis_server_major() < 7) {
    WARN("redis-server older than 7: DEBUG is enabled by default there; running anyway");
  }
  LogCapture log;
  auto tier = open_redis_tier(fast(redis.url()));
  auto hook = std::make_shared<FakeHook>();
  FakeService s(hook, {}, tier);
  CHECK(outcome_of(s, "warm") == RequestOutcome::encoded);
  RedisClient admin({.endpoint = RedisEndpoint::parse(redis.url(), false), .command_timeout = 5000ms});

  for (const std::vector<std::string_view>& stall : {std::vector<std::string_view>{"DEBUG", "SLEEP", "1.5"},
                                                     std::vector<std::string_view>{"CLIENT", "PAUSE", "1500", "ALL"}}) {
    INFO(stall[0]);
    std::thread staller([&] { admin.command(stall); });
    std::this_thread::sleep_for(100ms);
    s.clear();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
      CHECK(s.get_or_encode("stall" + std::to_string(i)) == fake_artifact("stall" + std::to_string(i)));
    const auto took = std::chrono::steady_clock::now() - t0;
    // One lookup and one write may each wait for a timeout; the rest skip the open circuit.
    CHECK(took < 1200ms);
    CHECK_FALSE(tier->client().available());
    staller.join();
    // After the stall and the backoff, the tier is back.
    for (int i = 0; i < 100 && !tier->client().available(); ++i) {
      tier->load(fake_key("probe"));
      std::this_thread::sleep_for(50ms);
    }
    CHECK(tier->client().available());
  }
  CHECK(log.count() == 2);  // one per outage
}

TEST_CASE("redis tier: eviction under maxmemory during load; a server without a limit is warned about") {
  REQUIRE_REDIS();
  {
    RedisServer redis({"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"});
    LogCapture log;
    auto tier = open_redis_tier(fast(redis.url()));
    FakeService s(std::make_shared<FakeHook>(), {.max_items = 4}, tier);
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 150; ++i) {
          const std::string text = std::string(400, 'x') + std::to_string(t * 1000 + i);
          if (s.get_or_encode(text) != fake_artifact(text)) ++wrong;
        }
      });
    for (auto& th : threads) th.join();
    CHECK(wrong == 0);
    auto info = tier->client().command({"INFO", "stats"});
    REQUIRE(info);
    const auto p = info->str.find("evicted_keys:");
    REQUIRE(p != std::string::npos);
    CHECK(std::atoll(info->str.c_str() + p + 13) > 0);
    CHECK(tier->stats().shared_corrupt == 0);
    CHECK(log.count() == 0);
    RedisServerInfo si = tier->server_info();
    CHECK(si.reachable);
    CHECK(si.maxmemory == 2u << 20);
    CHECK(si.policy == "allkeys-lru");
    CHECK(si.entries > 0);
    CHECK(si.entries < 600);
  }
  {
    RedisServer redis({"--maxmemory", "0"});
    LogCapture log;
    auto tier = open_redis_tier(fast(redis.url()));
    for (int i = 0; i < 3; ++i) tier->load(fake_key("x" + std::to_string(i)));
    REQUIRE(log.count() == 1);
    CHECK(log.warnings[0].find("no memory limit") != std::string::npos);
  }
  {
    RedisServer redis({"--maxmemory", "10mb", "--maxmemory-policy", "noeviction"});
    LogCapture log;
    auto tier = open_redis_tier(fast(redis.url()));
    for (int i = 0; i < 3; ++i) tier->load(fake_key("x" + std::to_string(i)));
    REQUIRE(log.count() == 1);
    CHECK(log.warnings[0].find("evicts nothing") != std::string::npos);
  }
}

TEST_CASE("redis tier: a follower waits for the lease holder, bounded, and takes over a lapsed lease") {
  REQUIRE_REDIS();
  RedisServer redis;
  auto tier = open_redis_tier(fast(redis.url()));
  RedisClient r(
      {.endpoint = RedisEndpoint::parse(redis.url(), false), .command_timeout = std::chrono::milliseconds(2000)});
  const ReferenceEncodeKey key = fake_key("dave");
  const std::string lease = tier->value_key(key) + ":lease";

  // A live lease and no value: the follower gives up after `wait` and encodes itself, without a lease.
  REQUIRE(r.command({"SET", lease, "someone-else", "PX", "60000"})->is_ok());
  auto t0 = std::chrono::steady_clock::now();
  TierLookup<Artifact> got = tier->load_or_lead(key, 150ms);
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(got.stored == nullptr);
  CHECK(got.lease == nullptr);
  CHECK(took >= 150ms);
  CHECK(took < 1000ms);
  CHECK(tier->stats().shared_lease_waits == 1);

  // The holder writes the value while the follower waits: a shared hit.
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    tier->store(key, fake_artifact("dave").compacted());
  });
  got = tier->load_or_lead(key, 5000ms);
  writer.join();
  REQUIRE(got.stored);
  CHECK(got.shared);
  CHECK(*got.stored == fake_artifact("dave").compacted());
  CHECK(tier->stats().shared_lease_waits == 2);

  // The holder crashed: its lease lapses without a value and the follower takes it over.
  REQUIRE(r.command({"DEL", tier->value_key(key)}));
  REQUIRE(r.command({"SET", lease, "crashed", "PX", "200"})->is_ok());
  got = tier->load_or_lead(key, 5000ms);
  CHECK(got.stored == nullptr);
  REQUIRE(got.lease);
  CHECK(tier->stats().shared_lease_takeovers == 1);
  CHECK(r.command({"GET", lease})->str != "crashed");
  got.lease.reset();  // released: only our own lease is deleted
  CHECK(r.command({"EXISTS", lease})->integer == 0);

  // Releasing a lease that lapsed and was taken by another replica leaves theirs alone.
  tier = open_redis_tier([&] {
    auto o = fast(redis.url());
    o.lease_ttl = 100ms;
    return o;
  }());
  got = tier->load_or_lead(key, 1000ms);
  REQUIRE(got.lease);
  std::this_thread::sleep_for(200ms);
  REQUIRE(r.command({"SET", lease, "next-holder", "PX", "60000"})->is_ok());
  got.lease.reset();
  CHECK(r.command({"GET", lease})->str == "next-holder");
}

TEST_CASE("redis tier: a lease held longer than its ttl is renewed, not taken over") {
  REQUIRE_REDIS();
  RedisServer redis;
  auto opts = fast(redis.url());
  opts.lease_ttl = 150ms;
  auto leader = open_redis_tier(opts);
  auto follower = open_redis_tier(opts);
  const ReferenceEncodeKey key = fake_key("erin");
  TierLookup<Artifact> lead = leader->load_or_lead(key, 1000ms);
  REQUIRE(lead.lease);
  // Four times the ttl: a follower still finds the lease held, waits out its own wait, takes nothing.
  TierLookup<Artifact> follow = follower->load_or_lead(key, 600ms);
  CHECK(follow.stored == nullptr);
  CHECK(follow.lease == nullptr);
  CHECK(follower->stats().shared_lease_waits == 1);
  CHECK(follower->stats().shared_lease_takeovers == 0);
  leader->store(key, fake_artifact("erin").compacted());
  lead.lease.reset();
  follow = follower->load_or_lead(key, 600ms);
  CHECK(follow.stored != nullptr);
  CHECK(follow.shared);
}

namespace {

/// One replica: a service over its own disk folder and the shared tier, asking for every key in its
/// own order from two threads. Exit code: encodes done (0..100), or 200+ on a wrong answer.
int replica(const std::string& url, const std::string& root, int seed, int keys) {
  try {
    auto hook = std::make_shared<SlowHook>(40ms);
    auto opts = fast(url);
    FakeService s(hook, {}, std::make_shared<TierChain>(open_disk_tier({.root = root}), open_redis_tier(opts)));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < keys; ++i) {
          const int k = (i * 7 + seed * 5 + t * 3) % keys;
          const std::string text = "fleet" + std::to_string(k);
          if (s.get_or_encode(text) != fake_artifact(text)) ++wrong;
        }
      });
    for (auto& th : threads) th.join();
    if (wrong) return 200;
    return hook->encodes;
  } catch (...) {
    return 250;
  }
}

}  // namespace

TEST_CASE("redis tier: four replica processes on the same keys encode each key once fleet-wide") {
  REQUIRE_REDIS();
  RedisServer redis;
  constexpr int kKeys = 24;
  std::vector<std::unique_ptr<TempDir>> roots;
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    roots.push_back(std::make_unique<TempDir>());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(replica(redis.url(), roots.back()->path.string(), p, kKeys));
    children.push_back(pid);
  }
  int encodes = 0;
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    const int code = WEXITSTATUS(status);
    CHECK(code < 200);
    encodes += code;
  }
  CHECK(encodes == kKeys);
}

TEST_CASE("redis tier: warm_up opens the pool's connections before the first lookup") {
  REQUIRE_REDIS();
  RedisServer redis;
  auto tier = open_redis_tier(fast(redis.url()));
  tier->warm_up(3);
  CHECK(tier->client().open_connections(3) == 3);  // already open: nothing more
  std::optional<RedisReply> list = tier->client().command({"CLIENT", "LIST"});  // on one of them
  REQUIRE(list);
  CHECK(std::count(list->str.begin(), list->str.end(), '\n') == 3);
  CHECK(tier->client().open_connections(100) == tier->client().options().max_connections);
  redis.kill_now();
  auto down = open_redis_tier(fast(redis.url()));
  down->warm_up();  // a server that is down: no throw, the circuit opens, lookups go on without it
  CHECK_FALSE(down->client().available());
  CHECK_FALSE(down->load_or_lead(fake_key("x"), std::chrono::milliseconds(10)).stored);
}
