// ReadMostlyLock: a reader-writer lock whose readers write only a cache line of their own.
//
// A reader announces itself in its thread's slot (thread_slot.hpp), checks that no writer is active,
// reads, and leaves its slot: readers never wait for each other and never write a line that another
// reader writes, so a read costs the same on 16 threads as on one. A writer raises a flag, which turns
// new readers away, and waits until every slot is empty. Writers must be serialized by the caller (the
// service holds its mutex); they should be rare and short, and readers must not block inside a read.
//
// A reader that is turned away takes the caller's slow path (for the service: its mutex, which the
// writer holds until it is done).
//
//   ReadMostlyLock lock;
//   if (ReadMostlyLock::Reader r(lock); r) { /* read the shared structure */ }
//   else { std::lock_guard g(mutex); /* read it under the writers' mutex */ }
//
//   std::lock_guard g(mutex);
//   ReadMostlyLock::Writer w(lock);   // waits for readers inside; turns new ones away
//   /* modify the shared structure */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "core/thread_slot.hpp"

namespace refenc {

class ReadMostlyLock {
 public:
  /// A read section: true when entered; leaves on destruction.
  class Reader {
   public:
    explicit Reader(ReadMostlyLock& lock) noexcept : slot_(lock.slots_[thread_slot()].readers) {
      // seq_cst on both sides (this add, the writer's flag store, the flag load below and the
      // writer's slot loads): either this reader sees the flag, or the writer sees this reader.
      slot_.fetch_add(1, std::memory_order_seq_cst);
      entered_ = !lock.writing_.load(std::memory_order_seq_cst);
      if (!entered_) slot_.fetch_sub(1, std::memory_order_release);
    }
    ~Reader() {
      if (entered_) slot_.fetch_sub(1, std::memory_order_release);
    }
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    explicit operator bool() const noexcept { return entered_; }

   private:
    std::atomic<std::uint32_t>& slot_;
    bool entered_;
  };

  /// Exclusive access until destruction. The caller serializes writers.
  class Writer {
   public:
    explicit Writer(ReadMostlyLock& lock) noexcept : lock_(lock) {
      lock_.writing_.store(true, std::memory_order_seq_cst);
      for (Slot& s : lock_.slots_)
        while (s.readers.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    }
    ~Writer() { lock_.writing_.store(false, std::memory_order_release); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

   private:
    ReadMostlyLock& lock_;
  };

 private:
  struct alignas(kCacheLine) Slot {
    std::atomic<std::uint32_t> readers{0};  ///< Readers of this slot inside a read section.
  };
  std::array<Slot, kThreadSlots> slots_{};
  alignas(kCacheLine) std::atomic<bool> writing_{false};
};

}  // namespace refenc
