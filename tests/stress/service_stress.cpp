// A long randomized run of the service with the disk tier and batching on, under injected faults:
// encode failures, revalidate refusals and throws, oversize artifacts, slow encodes that make
// followers time out, and failed batches. Invariants are checked continuously by a monitor thread
// and after the run.
//
//   stress_service [--threads 64] [--requests 100000] [--keys 3000] [--seed 1] [--root DIR] [--redis URL]
//
// With --redis, the second tier is the disk tier chained with the shared Redis tier (its leases, its
// verified values and its circuit breaker run under the same load); the run also checks that no
// shared value was found corrupt.
//
// Exit 0 when every invariant held; otherwise it prints each violation and exits 1. ctest runs a
// short version; the README's Reliability section gives the long runs.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/reference_encode_service.hpp"
#include "store/artifact.hpp"
#include "store/disk_tier.hpp"
#include "store/redis_tier.hpp"
#include "store/tier_chain.hpp"

namespace {

using namespace refenc;
using Clock = std::chrono::steady_clock;

struct Req {
  int key = 0;
  bool fail = false;  ///< encode_one throws; poisons any batch it is in.
  bool slow = false;  ///< encode takes long enough for followers to time out.
  bool revalidate_no = false;
  bool revalidate_throws = false;
};

/// What a fresh encode of `key` gives: deterministic, some keys larger than the memory budget.
Artifact expected(int key) {
  const std::int64_t frames = key % 97 == 0 ? 100000 : 8 + key % 53;
  std::vector<std::int64_t> v(static_cast<std::size_t>(2 * frames));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (key * 7919 + static_cast<std::int64_t>(i) * 31) % 4096;
  Artifact a;
  a.tensors["codes"] = HostTensor::from_vector<std::int64_t>({2, frames}, v);
  a.meta["key"] = std::to_string(key);
  return a;
}

class StressHook : public ReferenceEncodeHook<Req, Artifact, Artifact> {
 public:
  std::atomic<long> duplicates{0}, encodes{0}, batches{0};

  std::optional<ReferenceEncodeKey> cache_key(const Req& r) override {
    return ReferenceEncodeKey{"stress", "1", "synthetic", "cfg", "codes", std::to_string(r.key), ""};
  }
  Artifact encode_one(const Req& r) override {
    Active guard(*this, r.key);
    ++encodes;
    return encode(r);
  }
  bool can_encode_batch() const override { return true; }
  std::vector<Artifact> encode_batch(std::span<const Req* const> items) override {
    ++batches;
    std::vector<std::unique_ptr<Active>> guards;
    for (const Req* r : items) guards.push_back(std::make_unique<Active>(*this, r->key));
    std::vector<Artifact> out;
    for (const Req* r : items) out.push_back(encode(*r));
    return out;
  }
  Artifact store_artifact(const Artifact& a) override { return a.compacted(); }
  Artifact load_artifact(const Artifact& s) override { return s.widened(); }
  bool revalidate(const Req& r, const ReferenceEncodeKey&) override {
    if (r.revalidate_throws) throw Error(ErrorKind::io, "reference changed while encoding");
    return !r.revalidate_no;
  }
  std::size_t stored_bytes(const Artifact& s) const override { return s.byte_size(); }

 private:
  /// Detects two encodes of one key running at once (single-flight broken).
  struct Active {
    StressHook& h;
    int key;
    Active(StressHook& hook, int k) : h(hook), key(k) {
      std::lock_guard lock(h.m_);
      if (!h.active_.insert(key).second) ++h.duplicates;
    }
    ~Active() {
      std::lock_guard lock(h.m_);
      h.active_.erase(key);
    }
  };
  Artifact encode(const Req& r) {
    if (r.slow) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    if (r.fail) throw Error(ErrorKind::encode, "injected encode failure for " + std::to_string(r.key));
    return expected(r.key);
  }
  std::mutex m_;
  std::set<int> active_;
};

struct Args {
  int threads = 64;
  long requests = 100000;
  int keys = 3000;
  unsigned seed = 1;
  std::string root;
  std::string redis;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--threads")
      a.threads = std::stoi(v);
    else if (k == "--requests")
      a.requests = std::stol(v);
    else if (k == "--keys")
      a.keys = std::stoi(v);
    else if (k == "--seed")
      a.seed = static_cast<unsigned>(std::stoul(v));
    else if (k == "--root")
      a.root = v;
    else if (k == "--redis")
      a.redis = v;
    else {
      std::fprintf(stderr, "stress_service: unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  std::filesystem::path root =
      args.root.empty() ? std::filesystem::temp_directory_path() / ("refenc-stress-" + std::to_string(::getpid()))
                        : std::filesystem::path(args.root);
  std::filesystem::remove_all(root);
  const std::size_t max_bytes = 256 << 10;
  auto hook = std::make_shared<StressHook>();
  auto tier = store::open_disk_tier({.root = root.string(), .max_disk_bytes = 4u << 20});
  std::shared_ptr<store::RedisTier> shared;
  if (!args.redis.empty()) {
    shared = store::open_redis_tier({.url = args.redis, .prefix = "stress-" + std::to_string(::getpid())});
    shared->clear();
  }
  std::shared_ptr<store::TierChain> chain;
  if (shared) chain = std::make_shared<store::TierChain>(tier, shared);
  std::shared_ptr<SecondTier<Artifact>> second = tier;
  if (chain) second = chain;
  ReferenceEncodeService<Req, Artifact, Artifact> service(hook,
                                                          {.max_items = 256,
                                                           .max_bytes = max_bytes,
                                                           .timeout = std::chrono::milliseconds(10),
                                                           .max_batch_size = 8,
                                                           .max_batch_wait = std::chrono::microseconds(500)},
                                                          second);

  std::atomic<long> next{0}, answered{0}, ok{0}, wrong{0}, encode_errors{0}, timeouts{0}, other_errors{0};
  std::atomic<bool> done{false};
  std::mutex violations_mutex;
  std::vector<std::string> violations;
  auto violation = [&](std::string what) {
    std::lock_guard lock(violations_mutex);
    if (violations.size() < 20) violations.push_back(std::move(what));
  };

  std::thread monitor([&] {
    long checks = 0;
    while (!done) {
      auto a = service.audit();
      if (a.bytes != a.recounted_bytes)
        violation("byte gauge " + std::to_string(a.bytes) + " != recount " + std::to_string(a.recounted_bytes));
      if (a.bytes > max_bytes) violation("bytes over budget: " + std::to_string(a.bytes));
      if (a.entries > 256) violation("entries over max_items: " + std::to_string(a.entries));
      if (a.in_flight > static_cast<std::size_t>(args.threads)) violation("more flights than callers");
      ++checks;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::printf("monitor: %ld audits\n", checks);
  });

  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < args.threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(args.seed * 7919u + static_cast<unsigned>(t));
      std::uniform_int_distribution<int> key(0, args.keys - 1), pct(0, 999);
      while (next++ < args.requests) {
        Req r;
        r.key = key(rng);
        const int p = pct(rng);
        r.fail = p < 20;                          // 2 %
        r.slow = p >= 20 && p < 25;               // 0.5 %
        r.revalidate_no = p >= 25 && p < 45;      // 2 %
        r.revalidate_throws = p >= 45 && p < 55;  // 1 %
        try {
          Artifact got = service.get_or_encode(r, "request");
          if (got == expected(r.key))
            ++ok;
          else {
            ++wrong;
            violation("wrong artifact for key " + std::to_string(r.key));
          }
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::timeout)
            ++timeouts;
          else if (e.kind() == ErrorKind::encode || e.kind() == ErrorKind::io)
            ++encode_errors;
          else {
            ++other_errors;
            violation(std::string("unexpected error: ") + e.what());
          }
        }
        ++answered;
      }
    });
  }
  for (auto& th : pool) th.join();
  done = true;
  monitor.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  // Shared hits fill the disk on the chain's own thread: let those writes finish (outside the timed
  // run) before the disk is verified and its folder removed.
  if (chain) chain->flush();

  auto st = service.stats();
  auto audit = service.audit();
  if (answered != args.requests)
    violation("answered " + std::to_string(answered.load()) + " of " + std::to_string(args.requests));
  if (audit.in_flight != 0) violation("in-flight entries left: " + std::to_string(audit.in_flight));
  if (hook->duplicates != 0) violation("concurrent duplicate encodes: " + std::to_string(hook->duplicates.load()));
  if (st.hits + st.misses + st.merged + st.uncacheable != static_cast<std::uint64_t>(args.requests))
    violation("stats do not add up to the requests");
  const auto disk = tier->verify(false);
  if (!disk.corrupt.empty()) violation("disk tier holds corrupt entries: " + std::to_string(disk.corrupt.size()));

  std::printf("stress: %d threads, %ld requests, %d keys, %.1f s (%.0f req/s)\n", args.threads, args.requests,
              args.keys, seconds, args.requests / seconds);
  std::printf("answers: ok=%ld wrong=%ld encode/revalidate errors=%ld follower timeouts=%ld other=%ld\n", ok.load(),
              wrong.load(), encode_errors.load(), timeouts.load(), other_errors.load());
  std::printf(
      "service: hits=%llu misses=%llu merged=%llu failed=%llu timeouts=%llu evictions=%llu oversize=%llu "
      "batches=%llu batched_items=%llu\n",
      (unsigned long long)st.hits, (unsigned long long)st.misses, (unsigned long long)st.merged,
      (unsigned long long)st.failed, (unsigned long long)st.timeouts, (unsigned long long)st.evictions,
      (unsigned long long)st.oversize, (unsigned long long)st.batches, (unsigned long long)st.batched_items);
  std::printf(
      "disk: hits=%llu misses=%llu writes=%llu errors=%llu corrupt=%llu evictions=%llu; verify: %llu entries ok\n",
      (unsigned long long)st.tier.disk_hits, (unsigned long long)st.tier.disk_misses,
      (unsigned long long)st.tier.disk_writes, (unsigned long long)st.tier.disk_errors,
      (unsigned long long)st.tier.disk_corrupt, (unsigned long long)st.tier.disk_evictions,
      (unsigned long long)disk.ok);
  if (shared) {
    std::printf("shared: hits=%llu misses=%llu writes=%llu errors=%llu corrupt=%llu lease_waits=%llu takeovers=%llu\n",
                (unsigned long long)st.tier.shared_hits, (unsigned long long)st.tier.shared_misses,
                (unsigned long long)st.tier.shared_writes, (unsigned long long)st.tier.shared_errors,
                (unsigned long long)st.tier.shared_corrupt, (unsigned long long)st.tier.shared_lease_waits,
                (unsigned long long)st.tier.shared_lease_takeovers);
    const store::RedisClientStats c = shared->client().stats();
    std::printf("redis client: commands=%llu failures=%llu skipped=%llu circuit_opens=%llu\n",
                (unsigned long long)c.commands, (unsigned long long)c.failures, (unsigned long long)c.skipped,
                (unsigned long long)c.circuit_opens);
    if (st.tier.shared_corrupt)
      violation("shared tier found corrupt values: " + std::to_string(st.tier.shared_corrupt));
    if (st.tier.shared_writes == 0) violation("nothing was written to the shared tier");
    try {
      shared->clear();
    } catch (const std::exception&) {}
  }
  std::filesystem::remove_all(root);
  if (!violations.empty()) {
    for (auto& v : violations) std::printf("VIOLATION: %s\n", v.c_str());
    return 1;
  }
  std::printf("all invariants held\n");
  return 0;
}
