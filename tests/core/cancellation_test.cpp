// Per-call deadlines and cancellation, and forget(): a caller that gives up leaves the others alone;
// a flight nobody waits for is stopped and never cached; a forgotten key is never inserted again by
// the flight that was running when it was forgotten.
#include <catch2/catch.hpp>

#include <barrier>
#include <future>
#include <latch>
#include <stop_token>
#include <thread>
#include <vector>

#include "fake_hook.hpp"

using namespace refenc;
using namespace refenc::test;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

/// The kind of the Error that f() throws (fails the test when it returns).
template <class F>
ErrorKind kind_thrown(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("no Error thrown");
  return ErrorKind::encode;
}

}  // namespace

TEST_CASE("cancel: the leader's caller gives up; the followers still get the artifact, and it is cached") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::latch entered(1), release(1);
  std::stop_source leader_stop;
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 1, .entered = &entered, .release = &release}, "leader", nullptr,
                           {.stop = leader_stop.get_token()});
  });
  entered.wait();
  std::vector<std::future<Artifact>> followers;
  for (int i = 0; i < 3; ++i)
    followers.push_back(std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 1}); }));
  wait_until([&] { return s.stats().merged == 3; });
  leader_stop.request_stop();
  wait_until([&] { return s.stats().cancelled == 1; });  // left at once, while the encode runs on
  release.count_down();
  for (auto& f : followers) CHECK(f.get() == Artifact(4, 1));
  CHECK(kind_thrown([&] { leader.get(); }) == ErrorKind::cancelled);
  CHECK(hook->encodes(1) == 1);
  CHECK(hook->cancels_seen() == 0);
  auto st = s.stats();
  CHECK(st.cancelled == 1);
  CHECK(st.abandoned == 0);
  CHECK(st.failed == 0);
  CHECK(st.entries == 1);
  CHECK(s.get_or_encode(Req{.key = 1}) == Artifact(4, 1));
  CHECK(s.stats().hits == 1);
  CHECK(s.audit().in_flight == 0);
}

TEST_CASE("cancel: every caller gives up; the hook sees it, nothing is cached, the next call encodes again") {
  auto hook = std::make_shared<FakeHook>();
  auto tier = std::make_shared<MemoryTier>();
  Service s(hook, {}, tier);
  const bool hook_returns = GENERATE(false, true);  // a hook that stops by throwing, or returns anyway
  std::latch entered(1);
  std::stop_source leader_stop, follower_stop;
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(
        Req{.key = 2, .entered = &entered, .until_cancelled = true, .return_when_cancelled = hook_returns}, "leader",
        nullptr, {.stop = leader_stop.get_token()});
  });
  entered.wait();
  auto follower = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 2}, "follower", nullptr, {.stop = follower_stop.get_token()});
  });
  wait_until([&] { return s.stats().merged == 1; });
  follower_stop.request_stop();
  CHECK(kind_thrown([&] { follower.get(); }) == ErrorKind::cancelled);
  CHECK(hook->cancels_seen() == 0);  // the leader's caller still waits
  leader_stop.request_stop();
  CHECK(kind_thrown([&] { leader.get(); }) == ErrorKind::cancelled);
  CHECK(hook->cancels_seen() == 1);
  auto st = s.stats();
  CHECK(st.cancelled == 2);
  CHECK(st.abandoned == 1);
  CHECK(st.failed == 0);  // giving up is not a failure
  CHECK(st.entries == 0);
  CHECK(st.tier.disk_writes == 0);
  CHECK(s.audit().in_flight == 0);
  CHECK(s.get_or_encode(Req{.key = 2}) == Artifact(4, 2));
  CHECK(hook->encodes(2) == 2);
  CHECK(s.stats().entries == 1);
}

TEST_CASE("cancel: a follower's deadline ends its wait with a timeout; the leader goes on") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async,
                           [&] { return s.get_or_encode(Req{.key = 3, .entered = &entered, .release = &release}); });
  entered.wait();
  CHECK(kind_thrown([&] { s.get_or_encode(Req{.key = 3}, "late", nullptr, {.deadline = Clock::now() + 5ms}); }) ==
        ErrorKind::timeout);
  release.count_down();
  CHECK(leader.get() == Artifact(4, 3));
  auto st = s.stats();
  CHECK(st.timeouts == 1);
  CHECK(st.abandoned == 0);
  CHECK(st.entries == 1);
}

TEST_CASE("cancel: a caller that leads alone and passes its deadline stops a polling encode") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  RequestTrace t;
  CHECK(kind_thrown([&] {
          s.get_or_encode(Req{.key = 4, .until_cancelled = true}, "alone", &t, {.deadline = Clock::now() + 5ms});
        }) == ErrorKind::timeout);
  CHECK(t.timed_out);
  CHECK(hook->cancels_seen() == 1);
  auto st = s.stats();
  CHECK(st.timeouts == 1);
  CHECK(st.abandoned == 1);
  CHECK(st.entries == 0);
  CHECK(s.audit().in_flight == 0);
}

TEST_CASE("cancel: a deadline noticed only when the encode ends: the result is cached, the caller times out") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::latch entered(1), release(1);
  const auto deadline = Clock::now() + 5ms;
  auto leader = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 5, .entered = &entered, .release = &release}, "", nullptr,
                           {.deadline = deadline});
  });
  entered.wait();
  wait_until([&] { return Clock::now() > deadline; });
  release.count_down();  // the hook never polled: the load finished, so it is kept
  CHECK(kind_thrown([&] { leader.get(); }) == ErrorKind::timeout);
  CHECK(s.stats().entries == 1);
  CHECK(s.stats().abandoned == 0);
}

TEST_CASE("cancel: a caller already cancelled or past its deadline gets its error before any work") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::stop_source stop;
  stop.request_stop();
  CHECK(kind_thrown([&] { s.get_or_encode(Req{.key = 6}, "", nullptr, {.stop = stop.get_token()}); }) ==
        ErrorKind::cancelled);
  CHECK(kind_thrown([&] { s.get_or_encode(Req{.key = 6}, "", nullptr, {.deadline = Clock::now() - 1ms}); }) ==
        ErrorKind::timeout);
  CHECK(hook->total_encodes() == 0);
  CHECK(s.stats().misses == 0);
  CHECK(s.stats().cancelled == 1);
  CHECK(s.stats().timeouts == 1);
}

TEST_CASE("cancel: an uncacheable request's own cancel reaches its encode") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::latch entered(1);
  std::stop_source stop;
  auto f = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 7, .cacheable = false, .entered = &entered, .until_cancelled = true}, "", nullptr,
                           {.stop = stop.get_token()});
  });
  entered.wait();
  stop.request_stop();
  CHECK(kind_thrown([&] { f.get(); }) == ErrorKind::cancelled);
  CHECK(hook->cancels_seen() == 1);
  CHECK(s.stats().cancelled == 1);
  CHECK(s.stats().failed == 0);
}

TEST_CASE("cancel: racing the completion, every caller gets the artifact or its own cancel, never a stranded wait") {
  const int rounds = 200;
  for (int round = 0; round < rounds; ++round) {
    auto hook = std::make_shared<FakeHook>();
    Service s(hook);
    const bool leader_cancels = round % 2 == 1;  // odd rounds: everyone may give up at once
    std::latch entered(1), release(1);
    std::stop_source leader_stop, follower_stop;
    auto leader = std::async(std::launch::async, [&] {
      return s.get_or_encode(Req{.key = 8, .entered = &entered, .release = &release}, "", nullptr,
                             {.stop = leader_stop.get_token()});
    });
    entered.wait();
    auto follower = std::async(std::launch::async, [&] {
      return s.get_or_encode(Req{.key = 8}, "", nullptr, {.stop = follower_stop.get_token()});
    });
    wait_until([&] { return s.stats().merged == 1; });
    std::barrier go(3);
    std::thread completer([&] {
      go.arrive_and_wait();
      release.count_down();
    });
    std::thread canceller([&] {
      go.arrive_and_wait();
      follower_stop.request_stop();
      if (leader_cancels) leader_stop.request_stop();
    });
    go.arrive_and_wait();
    completer.join();
    canceller.join();

    int got = 0, cancelled = 0;
    for (auto* f : {&leader, &follower}) {
      try {
        const Artifact a = f->get();
        CHECK(a == Artifact(4, 8));
        ++got;
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::cancelled);
        ++cancelled;
      }
    }
    const auto st = s.stats();
    INFO("round " << round);
    CHECK(got + cancelled == 2);
    CHECK(st.cancelled == static_cast<std::uint64_t>(cancelled));
    CHECK(st.failed == 0);
    CHECK(s.audit().in_flight == 0);
    CHECK(hook->encodes(8) == 1);
    // Cached exactly when the flight was not abandoned; it can be abandoned only if both gave up.
    CHECK(st.entries == 1 - st.abandoned);
    if (!leader_cancels) CHECK(st.abandoned == 0);
    if (st.abandoned) CHECK(cancelled == 2);
  }
}

TEST_CASE("cancel: a queued batch item whose callers all gave up leaves the queue before it starts") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 4, .max_batch_wait = std::chrono::hours(1)});
  REQUIRE(s.batching());
  std::stop_source stop;
  auto f = std::async(std::launch::async,
                      [&] { return s.get_or_encode(Req{.key = 9}, "", nullptr, {.stop = stop.get_token()}); });
  wait_until([&] { return s.stats().misses == 1; });
  stop.request_stop();  // the only caller: the flight is abandoned and its queued item dropped
  CHECK(kind_thrown([&] { f.get(); }) == ErrorKind::cancelled);
  CHECK(hook->sizes().empty());
  CHECK(hook->total_encodes() == 0);
  auto st = s.stats();
  CHECK(st.abandoned == 1);
  CHECK(st.batches == 0);
  CHECK(st.entries == 0);
  CHECK(s.audit().in_flight == 0);
}

TEST_CASE("forget: a key dropped while in flight is not cached nor written through; its waiters get it") {
  auto hook = std::make_shared<FakeHook>();
  auto tier = std::make_shared<MemoryTier>();
  Service s(hook, {}, tier);
  std::latch entered(1), release(1);
  auto leader = std::async(std::launch::async,
                           [&] { return s.get_or_encode(Req{.key = 10, .entered = &entered, .release = &release}); });
  entered.wait();
  auto follower = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 10}); });
  wait_until([&] { return s.stats().merged == 1; });
  CHECK(s.forget(FakeHook::key_of(10)));
  CHECK(s.audit().in_flight == 0);  // detached: a new call would lead a new encode
  release.count_down();
  CHECK(leader.get() == Artifact(4, 10));
  CHECK(follower.get() == Artifact(4, 10));
  auto st = s.stats();
  CHECK(st.entries == 0);
  CHECK(st.tier.disk_writes == 0);
  CHECK(st.failed == 0);
  s.get_or_encode(Req{.key = 10});
  CHECK(hook->encodes(10) == 2);
  CHECK(s.stats().entries == 1);
}

TEST_CASE("forget: a detached flight leaves the key's newer flight alone") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  std::latch old_entered(1), old_release(1), new_entered(1), new_release(1);
  auto old_call = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 11, .entered = &old_entered, .release = &old_release});
  });
  old_entered.wait();
  s.forget(FakeHook::key_of(11));
  auto new_call = std::async(std::launch::async, [&] {
    return s.get_or_encode(Req{.key = 11, .size = 8, .entered = &new_entered, .release = &new_release});
  });
  new_entered.wait();
  old_release.count_down();
  CHECK(old_call.get() == Artifact(4, 11));
  CHECK(s.audit().in_flight == 1);  // the old flight did not erase the new one
  auto follower = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 11}); });
  wait_until([&] { return s.stats().merged == 1; });
  new_release.count_down();
  CHECK(new_call.get() == Artifact(8, 11));
  CHECK(follower.get() == Artifact(8, 11));
  CHECK(s.stats().entries == 1);
  CHECK(s.stats().bytes == 32);
}

TEST_CASE("forget: a cached key is dropped; an unknown key reports nothing dropped") {
  auto hook = std::make_shared<FakeHook>();
  Service s(hook);
  s.get_or_encode(Req{.key = 12});
  CHECK(s.forget(FakeHook::key_of(12)));
  CHECK_FALSE(s.forget(FakeHook::key_of(12)));
  CHECK(s.stats().entries == 0);
  s.get_or_encode(Req{.key = 12});
  CHECK(hook->encodes(12) == 2);
}
