// BatchCoalescer: the M4b queue that turns concurrent distinct encodes into batched calls.
//
// Callers (the service's cache-miss leaders) block in `submit`; one worker thread drains the queue up
// to `max_batch_size` items or until the oldest item has waited `max_batch_wait`, whichever comes
// first, and calls the batch function once. A failed batch (an exception, or a wrong number of
// results) hands every item back to its caller with no result, and the caller retries it alone. An
// item whose stop token is signalled while it is still queued leaves the queue (Error(cancelled));
// once taken into a batch it runs to the end of that batch.
//
//   BatchCoalescer<Clip, Codes> q([&](std::span<const Clip* const> xs) { return hook.encode_batch(xs); },
//                                 /*max_batch_size=*/8, std::chrono::milliseconds(4));
//   int size = 0;
//   std::optional<Codes> codes = q.submit(clip, &size);   // nullopt: the batch failed; retry alone
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace refenc {

template <class InputT, class ArtifactT>
class BatchCoalescer {
 public:
  using Clock = std::chrono::steady_clock;
  using BatchFn = std::function<std::vector<ArtifactT>(std::span<const InputT* const>)>;

  struct Stats {
    std::uint64_t batches = 0;        ///< Successful batch function calls.
    std::uint64_t batched_items = 0;  ///< Items encoded by successful batch function calls.
    std::uint64_t failed_batches = 0; ///< Batch function calls that threw or returned a wrong count.
    std::uint64_t dropped = 0;        ///< Items that left the queue on a stop request.
    std::array<std::uint64_t, 16> sizes{};  ///< sizes[i]: successful batches of size i+1 (last: 16+).
  };

  BatchCoalescer(BatchFn batch, std::size_t max_batch_size, std::chrono::microseconds max_batch_wait)
      : batch_(std::move(batch)), max_batch_size_(max_batch_size), max_batch_wait_(max_batch_wait) {
    if (max_batch_size_ < 1) throw Error(ErrorKind::config, "max_batch_size must be at least 1");
    if (max_batch_wait_.count() < 0) throw Error(ErrorKind::config, "max_batch_wait must not be negative");
    worker_ = std::thread([this] { run(); });
  }

  ~BatchCoalescer() { close(); }
  BatchCoalescer(const BatchCoalescer&) = delete;
  BatchCoalescer& operator=(const BatchCoalescer&) = delete;

  /// Queues `item` (which must outlive the call) and blocks until a batch has encoded it. Returns the
  /// artifact, or no value when its batch failed (the caller then encodes it alone). Throws
  /// Error(closed) when the coalescer is closed before the item is taken into a batch, and
  /// Error(cancelled) when `stop` is signalled before then (the item leaves the queue).
  std::optional<ArtifactT> submit(const InputT& item, int* batch_size = nullptr, std::stop_token stop = {}) {
    Slot slot;
    slot.item = &item;
    std::unique_lock lock(mutex_);
    if (closed_) throw Error(ErrorKind::closed, "service is closed");
    if (stop.stop_requested()) throw Error(ErrorKind::cancelled, "cancelled before it was queued for a batch");
    slot.enqueued = Clock::now();
    queue_.push_back(&slot);
    work_cv_.notify_one();
    if (!done_cv_.wait(lock, stop, [&] { return slot.done; })) {
      if (auto it = std::find(queue_.begin(), queue_.end(), &slot); it != queue_.end()) {
        queue_.erase(it);  // not taken yet: drop it
        ++stats_.dropped;
        throw Error(ErrorKind::cancelled, "cancelled while queued for a batch");
      }
      done_cv_.wait(lock, [&] { return slot.done; });  // in a batch now: the worker still uses the slot
    }
    if (slot.closed) throw Error(ErrorKind::closed, "service closed while the request waited for a batch");
    if (batch_size) *batch_size = slot.batch_size;
    return std::move(slot.result);
  }

  /// Stops the worker after the batch it is running, and fails every queued item with Error(closed).
  /// Idempotent.
  void close() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      closed_ = true;
    }
    work_cv_.notify_all();
    if (worker_.joinable()) worker_.join();
    std::lock_guard lock(mutex_);
    for (Slot* s : queue_) s->done = s->closed = true;
    queue_.clear();
    done_cv_.notify_all();
  }

  Stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  /// Items waiting in the queue now (not yet taken into a batch).
  std::size_t queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

 private:
  struct Slot {
    const InputT* item = nullptr;
    Clock::time_point enqueued{};
    bool done = false;
    bool closed = false;
    int batch_size = 0;
    std::optional<ArtifactT> result;
  };

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (closed_) return;
      const auto deadline = queue_.front()->enqueued + max_batch_wait_;
      work_cv_.wait_until(lock, deadline, [&] { return closed_ || queue_.size() >= max_batch_size_; });
      if (closed_) return;
      if (queue_.empty()) continue;  // every item waiting left on a stop request
      const std::size_t n = std::min(queue_.size(), max_batch_size_);
      std::vector<Slot*> slots(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      lock.unlock();

      std::vector<const InputT*> items;
      items.reserve(n);
      for (Slot* s : slots) items.push_back(s->item);
      std::vector<ArtifactT> out;
      bool ok = true;
      try {
        out = batch_(std::span<const InputT* const>(items));
        ok = out.size() == n;
      } catch (...) {
        ok = false;
      }

      lock.lock();
      if (ok) {
        ++stats_.batches;
        stats_.batched_items += n;
        ++stats_.sizes[std::min<std::size_t>(n, stats_.sizes.size()) - 1];
      } else {
        ++stats_.failed_batches;
      }
      for (std::size_t i = 0; i < n; ++i) {
        slots[i]->batch_size = static_cast<int>(n);
        if (ok) slots[i]->result.emplace(std::move(out[i]));
        slots[i]->done = true;
      }
      done_cv_.notify_all();
    }
  }

  BatchFn batch_;
  const std::size_t max_batch_size_;
  const std::chrono::microseconds max_batch_wait_;
  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable_any done_cv_;  // _any: waits can end on a stop token
  std::deque<Slot*> queue_;
  bool closed_ = false;
  Stats stats_;
  std::thread worker_;
};

}  // namespace refenc
