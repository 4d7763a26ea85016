// Randomized stress of the service: many threads, random keys, injected failures, oversize values
// and revalidate refusals, with and without batching. Invariants are checked after every phase.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "fake_hook.hpp"

using namespace refenc;
using namespace refenc::test;

namespace {

constexpr int kKeys = 48;
constexpr std::size_t kMaxBytes = 256;

/// Size of key k's artifact: fixed per key (so every answer can be checked); some keys are oversize.
std::size_t size_of(int k) { return k % 12 == 0 ? 100 : std::size_t(k % 7 + 1); }

int iterations() {
  const char* env = std::getenv("REFENC_STRESS_ITERATIONS");
  return env ? std::atoi(env) : 400;
}

template <class Hook>
void run_stress(ServiceOptions options) {
  auto hook = std::make_shared<Hook>();
  Service s(hook, options);
  const int threads = 16;
  const int per_thread = iterations();
  for (int phase = 0; phase < 3; ++phase) {
    std::atomic<int> answered{0}, wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937 rng(1000 * phase + t);
        std::uniform_int_distribution<int> key(0, kKeys - 1), pct(0, 99);
        for (int i = 0; i < per_thread; ++i) {
          Req r;
          r.key = key(rng);
          r.size = size_of(r.key);
          const int p = pct(rng);
          r.fail = p < 5;
          r.revalidate_ok = !(p >= 5 && p < 10);
          if (p >= 10 && p < 13) {
            r.cacheable = false;
            r.key += 1000;  // its own key range: uncacheable encodes may legitimately overlap
            r.size = size_of(r.key);
          }
          try {
            Artifact a = s.get_or_encode(r);
            if (a != Artifact(r.size, r.key)) ++wrong;
          } catch (const Error& e) {
            if (e.kind() != ErrorKind::encode) ++wrong;
          }
          ++answered;
        }
      });
    }
    for (auto& th : pool) th.join();
    INFO("phase " << phase);
    CHECK(answered == threads * per_thread);  // every call returned or threw
    CHECK(wrong == 0);
    auto audit = s.audit();
    CHECK(audit.in_flight == 0);
    CHECK(audit.bytes == audit.recounted_bytes);
    CHECK(audit.bytes <= kMaxBytes);
    CHECK(audit.entries <= options.max_items);
    CHECK(hook->concurrent_duplicates() == 0);
    auto st = s.stats();
    CHECK(st.hits + st.misses + st.merged + st.uncacheable == std::uint64_t(threads * per_thread * (phase + 1)));
  }
  CHECK(s.stats().evictions > 0);
  CHECK(s.stats().oversize > 0);
  CHECK(s.stats().failed > 0);
}

}  // namespace

TEST_CASE("stress: M4a under 16 threads keeps every invariant") {
  run_stress<FakeHook>({.max_items = 16, .max_bytes = kMaxBytes});
}

TEST_CASE("stress: M4b under 16 threads keeps every invariant") {
  run_stress<BatchHook>({.max_items = 16, .max_bytes = kMaxBytes, .max_batch_size = 4,
                         .max_batch_wait = std::chrono::microseconds(200)});
}
