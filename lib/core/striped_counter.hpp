// StripedCounter: a counter that many threads bump without writing a cache line another thread writes.
//
// Each thread adds to its own stripe (see thread_slot.hpp); `load` sums the stripes. A load concurrent
// with adds sees some of them, like any relaxed counter; after the adders are joined it is exact.
//
//   StripedCounter hits;
//   hits.add();          // on the hot path: one uncontended atomic add
//   hits.load();         // in stats(): the sum
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "core/thread_slot.hpp"

namespace refenc {

class StripedCounter {
 public:
  void add(std::uint64_t n = 1) noexcept { stripes_[thread_slot()].value.fetch_add(n, std::memory_order_relaxed); }

  std::uint64_t load() const noexcept {
    std::uint64_t sum = 0;
    for (const Stripe& s : stripes_) sum += s.value.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(kCacheLine) Stripe {
    std::atomic<std::uint64_t> value{0};
  };
  std::array<Stripe, kThreadSlots> stripes_{};
};

}  // namespace refenc
