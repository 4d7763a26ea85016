// thread_slot: a small per-thread index, so that per-thread state can live in fixed arrays.
//
// Threads receive consecutive indices modulo `kThreadSlots` the first time they ask; a thread keeps its
// index for life. Up to kThreadSlots threads never share one; beyond that some do, so state indexed by
// it must stay correct when shared (atomics), it is only slower.
//
//   struct alignas(64) Stripe { std::atomic<std::uint64_t> n{0}; };
//   std::array<Stripe, kThreadSlots> stripes;
//   stripes[thread_slot()].n.fetch_add(1, std::memory_order_relaxed);
#pragma once

#include <atomic>
#include <cstddef>

namespace refenc {

inline constexpr std::size_t kThreadSlots = 64;
/// Destructive-interference size on x86-64 (std::hardware_destructive_interference_size warns in g++).
inline constexpr std::size_t kCacheLine = 64;

/// The calling thread's index in [0, kThreadSlots).
inline std::size_t thread_slot() noexcept {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kThreadSlots;
  return slot;
}

}  // namespace refenc
