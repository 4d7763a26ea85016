#include <catch2/catch.hpp>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

#include "core/read_mostly_lock.hpp"
#include "core/striped_counter.hpp"

using refenc::ReadMostlyLock;

TEST_CASE("read-mostly lock: readers do not exclude each other") {
  ReadMostlyLock lock;
  ReadMostlyLock::Reader a(lock);
  ReadMostlyLock::Reader b(lock);  // same thread, same slot
  bool other = false;
  std::thread([&] { other = static_cast<bool>(ReadMostlyLock::Reader(lock)); }).join();
  CHECK(a);
  CHECK(b);
  CHECK(other);
}

TEST_CASE("read-mostly lock: a reader is turned away while a writer is active, and admitted after") {
  ReadMostlyLock lock;
  std::latch writing(1), done(1);
  std::thread writer([&] {
    ReadMostlyLock::Writer w(lock);
    writing.count_down();
    done.wait();
  });
  writing.wait();
  CHECK_FALSE(ReadMostlyLock::Reader(lock));
  done.count_down();
  writer.join();
  CHECK(ReadMostlyLock::Reader(lock));
}

TEST_CASE("read-mostly lock: a writer waits until the readers inside have left") {
  ReadMostlyLock lock;
  std::atomic<bool> wrote{false};
  auto inside = std::make_unique<ReadMostlyLock::Reader>(lock);
  REQUIRE(*inside);
  std::thread writer([&] {
    ReadMostlyLock::Writer w(lock);
    wrote = true;
  });
  // Once a new reader is turned away, the writer has raised its flag and is waiting for `inside`.
  while (ReadMostlyLock::Reader(lock)) std::this_thread::yield();
  CHECK_FALSE(wrote.load());
  inside.reset();
  writer.join();
  CHECK(wrote.load());
}

TEST_CASE("read-mostly lock: writes never overlap reads (randomized)") {
  ReadMostlyLock lock;
  int a = 0, b = 0;  // a writer keeps a == b; a reader must never see them differ
  std::atomic<long> torn{0}, reads{0}, turned_away{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < 6; ++t)
    pool.emplace_back([&] {
      while (!stop.load()) {
        ReadMostlyLock::Reader r(lock);
        if (!r) {
          ++turned_away;
          continue;
        }
        if (a != b) ++torn;
        ++reads;
      }
    });
  for (int i = 0; i < 2000; ++i) {
    ReadMostlyLock::Writer w(lock);
    ++a;
    ++b;
  }
  stop = true;
  for (auto& th : pool) th.join();
  CHECK(torn.load() == 0);
  CHECK(a == 2000);
}

TEST_CASE("striped counter: adds from many threads sum exactly") {
  refenc::StripedCounter n;
  std::vector<std::thread> pool;
  for (int t = 0; t < 80; ++t)  // more threads than slots: some share a stripe
    pool.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) n.add();
    });
  for (auto& th : pool) th.join();
  CHECK(n.load() == 80'000);
}
