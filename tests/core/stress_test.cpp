// Randomized stress of the service: many threads, random keys, injected failures, oversize values,
// revalidate refusals, callers that are cancelled or run out of time (some of them on encodes that
// stop only when abandoned), with and without batching. Invariants are checked after every phase.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <stop_token>
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

/// One stop source per worker thread that a canceller thread may signal while the call runs.
struct CancelSlots {
  explicit CancelSlots(int n) : slots(static_cast<std::size_t>(n)) {}
  std::mutex m;
  std::vector<std::optional<std::stop_source>> slots;
};

template <class Hook>
void run_stress(ServiceOptions options) {
  auto hook = std::make_shared<Hook>();
  Service s(hook, options);
  const int threads = 16;
  const int per_thread = iterations();
  using Clock = std::chrono::steady_clock;
  for (int phase = 0; phase < 3; ++phase) {
    std::atomic<int> answered{0}, wrong{0};
    std::atomic<bool> finished{false};
    CancelSlots cancel(threads);
    std::thread canceller([&] {
      std::mt19937 rng(77 + phase);
      std::uniform_int_distribution<int> slot(0, threads - 1);
      while (!finished.load()) {
        std::optional<std::stop_source> src;
        {
          std::lock_guard lock(cancel.m);
          src = cancel.slots[static_cast<std::size_t>(slot(rng))];
        }
        if (src) src->request_stop();
        std::this_thread::yield();
      }
    });
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937 rng(1000 * phase + t);
        std::uniform_int_distribution<int> key(0, kKeys - 1), pct(0, 99), micros(0, 300);
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
          CallOptions call;
          ErrorKind gives_up_as = ErrorKind::encode;  // the error kind this call may end with
          if (p >= 13 && p < 16) {                    // cancelled at a random moment by the canceller, or not
            std::lock_guard lock(cancel.m);
            auto& src = cancel.slots[static_cast<std::size_t>(t)].emplace();
            call.stop = src.get_token();
            gives_up_as = ErrorKind::cancelled;
          } else if (p >= 16 && p < 21) {  // a deadline within 300 us
            call.deadline = Clock::now() + std::chrono::microseconds(micros(rng));
            gives_up_as = ErrorKind::timeout;
            if (p >= 19) {  // keys whose encode ends only when every caller has given up
              r.key = 2000 + r.key % 4;
              r.size = size_of(r.key);
              r.until_cancelled = true;
            }
          }
          r.may_overlap = gives_up_as != ErrorKind::encode;
          try {
            Artifact a = s.get_or_encode(r, "", nullptr, call);
            if (a != Artifact(r.size, r.key)) ++wrong;
          } catch (const Error& e) {
            // An abandoned encode's own error ("stopped: ...") must never reach a caller.
            const bool injected =
                e.kind() == ErrorKind::encode && std::string(e.what()).find("stopped") == std::string::npos;
            if (!injected && e.kind() != gives_up_as) ++wrong;
          }
          if (call.stop.stop_possible()) {
            std::lock_guard lock(cancel.m);
            cancel.slots[static_cast<std::size_t>(t)].reset();
          }
          ++answered;
        }
      });
    }
    for (auto& th : pool) th.join();
    finished = true;
    canceller.join();
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
    // Every call is a hit, a miss, a merge or uncacheable, except those that gave up on entry.
    const auto total = std::uint64_t(threads * per_thread * (phase + 1));
    const auto counted = st.hits + st.misses + st.merged + st.uncacheable;
    CHECK(counted <= total);
    CHECK(counted + st.timeouts + st.cancelled >= total);
  }
  CHECK(s.stats().evictions > 0);
  CHECK(s.stats().timeouts > 0);
  // Without batching every flight of the until_cancelled keys ends abandoned; with it they are
  // usually encoded in a batch first.
  if (!s.batching()) CHECK(s.stats().abandoned > 0);
  CHECK(s.stats().oversize > 0);
  CHECK(s.stats().failed > 0);
}

}  // namespace

TEST_CASE("stress: M4a under 16 threads keeps every invariant") {
  run_stress<FakeHook>({.max_items = 16, .max_bytes = kMaxBytes});
}

TEST_CASE("stress: M4b under 16 threads keeps every invariant") {
  run_stress<BatchHook>(
      {.max_items = 16, .max_bytes = kMaxBytes, .max_batch_size = 4, .max_batch_wait = std::chrono::microseconds(200)});
}
