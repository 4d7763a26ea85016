// M4b: opt-in different-key batch coalescing.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <latch>
#include <stop_token>
#include <vector>

#include "fake_hook.hpp"

using namespace refenc;
using namespace refenc::test;
using namespace std::chrono_literals;

namespace {

std::future<Artifact> ask(Service& s, Req r) {
  return std::async(std::launch::async, [&s, r] { return s.get_or_encode(r); });
}

}  // namespace

TEST_CASE("batching: off by default and off for hooks that cannot batch") {
  auto hook = std::make_shared<BatchHook>();
  Service off(hook);
  CHECK_FALSE(off.batching());
  off.get_or_encode(Req{.key = 1});
  CHECK(hook->sizes().empty());
  CHECK(off.stats().batches == 0);

  Service plain(std::make_shared<FakeHook>(), {.max_batch_size = 8});
  CHECK_FALSE(plain.batching());
  CHECK(plain.get_or_encode(Req{.key = 1}) == Artifact(4, 1));

  Service on(hook, {.max_batch_size = 2});
  CHECK(on.batching());
  CHECK_THROWS_AS(Service(hook, {.max_batch_size = 2, .max_batch_wait = -1us}), Error);
}

TEST_CASE("batching: distinct keys coalesce into one batch; each caller gets its own item") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 4, .max_batch_wait = 1h});  // fires only when 4 are queued
  std::vector<std::future<Artifact>> f;
  for (int k = 1; k <= 4; ++k) f.push_back(ask(s, Req{.key = k, .size = std::size_t(k)}));
  for (int k = 1; k <= 4; ++k) CHECK(f[k - 1].get() == Artifact(k, k));
  CHECK(hook->sizes() == std::vector<std::size_t>{4});
  auto st = s.stats();
  CHECK(st.batches == 1);
  CHECK(st.batched_items == 4);
  CHECK(st.batch_sizes[3] == 1);
  CHECK(st.misses == 4);
  CHECK(st.entries == 4);
  CHECK(hook->total_encodes() == 0);  // no encode_one at all
}

TEST_CASE("batching: each request's trace names its batch, numbered from 1 in the order taken") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 4, .max_batch_wait = 1h});  // fires only when 4 are queued
  std::vector<RequestTrace> traces(8);
  for (int round = 0; round < 2; ++round) {
    std::vector<std::future<Artifact>> f;
    for (int k = 0; k < 4; ++k) {
      const int i = round * 4 + k;
      f.push_back(std::async(std::launch::async,
                             [&s, &traces, i] { return s.get_or_encode(Req{.key = i + 1}, "", &traces[i]); }));
    }
    for (auto& x : f) x.get();
  }
  for (int i = 0; i < 8; ++i) {
    CHECK(traces[i].batch_size == 4);
    CHECK(traces[i].batch_id == std::uint64_t(i / 4 + 1));
  }
  RequestTrace single;
  Service plain(hook);
  plain.get_or_encode(Req{.key = 99}, "", &single);
  CHECK(single.batch_id == 0);
}

TEST_CASE("batching: the size cap holds") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 3, .max_batch_wait = 1h});
  std::vector<std::future<Artifact>> f;
  for (int k = 1; k <= 6; ++k) f.push_back(ask(s, Req{.key = k}));
  for (auto& x : f) x.get();
  CHECK(hook->sizes() == std::vector<std::size_t>{3, 3});
}

TEST_CASE("batching: hits bypass the queue") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  auto a = ask(s, Req{.key = 1});
  auto b = ask(s, Req{.key = 2});
  a.get();
  b.get();
  auto waiting = ask(s, Req{.key = 3});  // sits in the queue: the batch needs 2
  wait_until([&] { return s.stats().misses == 3; });
  CHECK(s.get_or_encode(Req{.key = 1}) == Artifact(4, 1));  // answered while key 3 waits
  CHECK(s.stats().hits == 1);
  auto partner = ask(s, Req{.key = 4});
  CHECK(waiting.get() == Artifact(4, 3));
  partner.get();
  CHECK(hook->sizes() == std::vector<std::size_t>{2, 2});
}

TEST_CASE("batching: same-key callers merge before batching") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  std::vector<std::future<Artifact>> f;
  f.push_back(ask(s, Req{.key = 1}));
  wait_until([&] { return s.stats().misses == 1; });
  for (int i = 0; i < 5; ++i) f.push_back(ask(s, Req{.key = 1}));
  wait_until([&] { return s.stats().merged == 5; });
  f.push_back(ask(s, Req{.key = 2}));  // the second distinct leader completes the batch
  for (std::size_t i = 0; i < f.size(); ++i) CHECK(f[i].get() == Artifact(4, i + 1 == f.size() ? 2 : 1));
  CHECK(hook->sizes() == std::vector<std::size_t>{2});
  CHECK(s.stats().batched_items == 2);
}

TEST_CASE("batching: a lone request is not held past the wait bound") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 8, .max_batch_wait = 5ms});
  RequestTrace t;
  CHECK(s.get_or_encode(Req{.key = 1}, "", &t) == Artifact(4, 1));
  CHECK(t.batch_size == 1);
  CHECK(hook->sizes() == std::vector<std::size_t>{1});
  // Generous bound: only proves the request is released by the timer, not by more arrivals.
  CHECK(t.end - t.start < 30s);
}

TEST_CASE("batching: a failed batch is retried per item; a bad item fails only its own callers") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 3, .max_batch_wait = 1h});
  auto good1 = ask(s, Req{.key = 1});
  auto bad = ask(s, Req{.key = 2, .fail = true});
  auto good3 = ask(s, Req{.key = 3});
  CHECK(good1.get() == Artifact(4, 1));
  CHECK(good3.get() == Artifact(4, 3));
  try {
    bad.get();
    FAIL("bad item should fail");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::encode);
    CHECK(std::string(e.what()) == "encoder exploded on 2");
  }
  CHECK(hook->sizes() == std::vector<std::size_t>{3});
  CHECK(hook->total_encodes() == 3);  // each item retried alone with encode_one
  auto st = s.stats();
  CHECK(st.failed == 1);
  CHECK(st.entries == 2);
  CHECK(st.failed_batches == 1);  // only successful batches count in batches and batched_items
  CHECK(st.batches == 0);
  CHECK(st.batched_items == 0);
  CHECK(st.batch_sizes[2] == 0);
}

TEST_CASE("batching: a batch returning the wrong number of artifacts is a failed batch") {
  auto hook = std::make_shared<BatchHook>();
  hook->wrong_count = true;
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  auto a = ask(s, Req{.key = 1});
  auto b = ask(s, Req{.key = 2});
  CHECK(a.get() == Artifact(4, 1));
  CHECK(b.get() == Artifact(4, 2));
  CHECK(hook->total_encodes() == 2);
  CHECK(s.stats().failed_batches == 1);
  CHECK(s.stats().batches == 0);
}

TEST_CASE("batching: uncacheable items batch and are never inserted") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  auto a = ask(s, Req{.key = 1, .cacheable = false});
  auto b = ask(s, Req{.key = 1, .cacheable = false});  // same content, no key: no merge either
  CHECK(a.get() == Artifact(4, 1));
  CHECK(b.get() == Artifact(4, 1));
  CHECK(hook->sizes() == std::vector<std::size_t>{2});
  auto st = s.stats();
  CHECK(st.uncacheable == 2);
  CHECK(st.entries == 0);
}

TEST_CASE("batching: close fails queued waiters and their followers with a clear error") {
  auto hook = std::make_shared<BatchHook>();
  auto s = std::make_unique<Service>(hook, ServiceOptions{.max_batch_size = 4, .max_batch_wait = 1h});
  std::vector<std::future<Artifact>> f;
  f.push_back(ask(*s, Req{.key = 1}));
  f.push_back(ask(*s, Req{.key = 2}));
  wait_until([&] { return s->stats().misses == 2; });
  f.push_back(ask(*s, Req{.key = 1}));
  wait_until([&] { return s->stats().merged == 1; });
  s->close();
  for (auto& x : f) {
    try {
      x.get();
      FAIL("queued request should fail on close");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::closed);
    }
  }
  CHECK(hook->sizes().empty());
  s.reset();  // destruction after close is clean
}

TEST_CASE("batching: the trace carries the batch size") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  RequestTrace t1, t2;
  auto a = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 1}, "", &t1); });
  auto b = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 2}, "", &t2); });
  a.get();
  b.get();
  CHECK(t1.batch_size == 2);
  CHECK(t2.batch_size == 2);
  CHECK(t1.outcome == RequestOutcome::encoded);
}

TEST_CASE("batching: a stop request leaves the queue before the batch starts, never during it") {
  std::latch entered(1), release(1);
  std::atomic<int> calls{0};
  BatchCoalescer<int, int> q(
      [&](std::span<const int* const> xs) {
        if (calls++ == 0) {  // the first batch holds the worker
          entered.count_down();
          release.wait();
        }
        std::vector<int> out;
        for (const int* x : xs) out.push_back(*x * 10);
        return out;
      },
      /*max_batch_size=*/1, std::chrono::microseconds(0));
  std::stop_source in_batch, queued;
  const int a = 1, b = 2;
  auto first = std::async(std::launch::async, [&] { return q.submit(a, nullptr, in_batch.get_token()); });
  entered.wait();  // item a is in the running batch
  auto second = std::async(std::launch::async, [&] { return q.submit(b, nullptr, queued.get_token()); });
  wait_until([&] { return q.queued() == 1; });
  queued.request_stop();
  try {
    second.get();
    FAIL("a queued item whose stop was requested should leave the queue");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::cancelled);
  }
  in_batch.request_stop();  // too late: the batch has the item; the caller waits for it
  release.count_down();
  CHECK(first.get() == std::optional<int>(10));
  auto st = q.stats();
  CHECK(st.dropped == 1);
  CHECK(st.batches == 1);
  CHECK(calls == 1);
}

TEST_CASE("batching: with cache_batched off a batch answers its callers but fills no cache") {
  auto hook = std::make_shared<BatchHook>();
  auto tier = std::make_shared<MemoryTier>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h, .cache_batched = false}, tier);
  for (int round = 0; round < 2; ++round) {
    auto a = ask(s, Req{.key = 1});
    auto b = ask(s, Req{.key = 2});
    CHECK(a.get() == Artifact(4, 1));
    CHECK(b.get() == Artifact(4, 2));
  }
  auto st = s.stats();
  CHECK(st.misses == 4);  // the second round encodes again
  CHECK(st.entries == 0);
  CHECK(st.tier.disk_writes == 0);
  CHECK(hook->sizes() == std::vector<std::size_t>{2, 2});
}

TEST_CASE("batching: batch_workers run that many batches at once") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h, .batch_workers = 2});
  std::latch entered(2), release(1);  // the first item of each batch counts down, then waits
  std::vector<std::future<Artifact>> f;
  for (int k = 1; k <= 4; ++k) f.push_back(ask(s, Req{.key = k, .entered = &entered, .release = &release}));
  entered.wait();  // both batches are inside encode_batch together: one worker could not get here
  release.count_down();
  for (int k = 1; k <= 4; ++k) CHECK(f[k - 1].get() == Artifact(4, k));
  CHECK(hook->sizes() == std::vector<std::size_t>{2, 2});
  CHECK_THROWS_AS(Service(hook, {.max_batch_size = 2, .batch_workers = 0}), Error);
}

namespace {

/// A coalescer whose first batch (a plug of length 0) blocks until released, so that the items queued
/// meanwhile are grouped in one known state; records each batch's lengths.
struct GroupingRig {
  std::latch plug_in{1}, plug_out{1};
  std::mutex m;
  std::vector<std::vector<std::size_t>> batches;
  BatchCoalescer<std::size_t, std::size_t> q;
  explicit GroupingRig(BatchGrouping g)
      : q(
            [this](std::span<const std::size_t* const> xs) {
              std::vector<std::size_t> lengths;
              for (const std::size_t* x : xs) lengths.push_back(*x);
              if (lengths == std::vector<std::size_t>{0}) plug_in.count_down(), plug_out.wait();
              std::lock_guard lock(m);
              batches.push_back(lengths);
              return lengths;
            },
            4, std::chrono::microseconds(0), 1, g, [](const std::size_t& x) { return x; }) {}
  std::vector<std::vector<std::size_t>> run(std::vector<std::size_t> lengths) {
    static const std::size_t plug = 0;
    auto first = std::async(std::launch::async, [&] { return q.submit(plug); });
    plug_in.wait();
    std::vector<std::future<std::optional<std::size_t>>> f;
    for (const std::size_t& l : lengths) {
      f.push_back(std::async(std::launch::async, [&] { return q.submit(l); }));
      wait_until([&] { return q.queued() == f.size(); });  // queued in this order
    }
    plug_out.count_down();
    first.get();
    for (std::size_t i = 0; i < f.size(); ++i) CHECK(f[i].get() == lengths[i]);
    std::lock_guard lock(m);
    return {batches.begin() + 1, batches.end()};
  }
};

}  // namespace

TEST_CASE("batching: exact length grouping batches only equal lengths") {
  GroupingRig rig({.mode = BatchGrouping::Mode::exact});
  auto batches = rig.run({40, 80, 40, 80});
  CHECK(batches == std::vector<std::vector<std::size_t>>{{40, 40}, {80, 80}});
  CHECK(rig.q.stats().padded_units == 0);
}

TEST_CASE("batching: max_padding_waste keeps each batch's padded fraction within the bound") {
  GroupingRig rig({.mode = BatchGrouping::Mode::max_padding_waste, .max_padding_waste = 0.2});
  auto batches = rig.run({100, 90, 40, 100});
  CHECK(batches == std::vector<std::vector<std::size_t>>{{100, 90, 100}, {40}});
  auto st = rig.q.stats();
  CHECK(st.length_units == 300 + 40);
  CHECK(st.padded_units == 10);
  CHECK(padded_fraction(std::vector<std::size_t>{100, 90, 100}) == Approx(10.0 / 300));
  CHECK_THROWS_AS(
      (BatchCoalescer<int, int>([](auto) { return std::vector<int>{}; }, 2, {}, 1,
                                {.mode = BatchGrouping::Mode::max_padding_waste, .max_padding_waste = 1.5})),
      Error);
}

TEST_CASE("batching: a trace carries its batch's padded fraction") {
  auto hook = std::make_shared<BatchHook>();
  Service s(hook, {.max_batch_size = 2, .max_batch_wait = 1h});
  RequestTrace ta, tb;
  auto a = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 1, .size = 2}, "", &ta); });
  auto b = std::async(std::launch::async, [&] { return s.get_or_encode(Req{.key = 2, .size = 4}, "", &tb); });
  a.get();
  b.get();
  CHECK(ta.batch_padding == Approx(0.25));
  CHECK(tb.batch_padding == Approx(0.25));
  CHECK(s.stats().batch_padded_units == 2);
}
