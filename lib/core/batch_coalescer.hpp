// BatchCoalescer: the M4b queue that turns concurrent distinct encodes into batched calls.
//
// Callers (the service's cache-miss leaders) block in `submit`; `workers` threads (default one) each
// drain the queue up to `max_batch_size` items or until the oldest item has waited `max_batch_wait`,
// whichever comes first, and call the batch function once. With a length function and a grouping
// (BatchGrouping), a batch takes the oldest item and then only queued items whose lengths keep the
// batch's padded fraction (1 - sum of lengths / (size x longest)) within the grouping's bound; the
// others wait for a later batch. A failed batch (an exception, or a wrong number of
// results) hands every item back to its caller with no result, and the caller retries it alone. An
// item whose stop token is signalled while it is still queued leaves the queue (Error(cancelled));
// once taken into a batch it runs to the end of that batch.
//
//   BatchCoalescer<Clip, Codes> q([&](std::span<const Clip* const> xs) { return hook.encode_batch(xs); },
//                                 /*max_batch_size=*/8, std::chrono::milliseconds(4));
//   int size = 0;
//   std::optional<Codes> codes = q.submit(clip, &size);   // nullopt: the batch failed; retry alone
//   BatchCoalescer<Clip, Codes> by_length([&](std::span<const Clip* const> xs) { return hook.encode_batch(xs); },
//                                         8, std::chrono::milliseconds(4), /*workers=*/4,
//                                         {.mode = BatchGrouping::Mode::max_padding_waste, .max_padding_waste = 0.2},
//                                         [](const Clip& c) { return length_of(c); });   // e.g. samples
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

/// How a batch may mix input lengths (BatchCoalescer's length function gives them).
struct BatchGrouping {
  enum class Mode {
    none,               ///< Any queued items, oldest first.
    exact,              ///< Only items of the oldest item's length.
    max_padding_waste,  ///< Items while the batch's padded fraction stays <= max_padding_waste.
  };
  Mode mode = Mode::none;
  double max_padding_waste = 0;  ///< In [0, 1]; max_padding_waste mode only.
};

/// The padded fraction of a batch whose items have `lengths`: 1 - sum / (count x longest); 0 when
/// every length is 0 (lengths unknown).
inline double padded_fraction(std::span<const std::size_t> lengths) {
  std::size_t longest = 0, sum = 0;
  for (std::size_t l : lengths) longest = std::max(longest, l), sum += l;
  if (longest == 0) return 0;
  return 1.0 - static_cast<double>(sum) / (static_cast<double>(longest) * static_cast<double>(lengths.size()));
}

template <class InputT, class ArtifactT>
class BatchCoalescer {
 public:
  using Clock = std::chrono::steady_clock;
  using BatchFn = std::function<std::vector<ArtifactT>(std::span<const InputT* const>)>;
  /// An input's length in the batch's padded dimension (e.g. samples); 0 = unknown.
  using LengthFn = std::function<std::size_t(const InputT&)>;

  struct Stats {
    std::uint64_t batches = 0;              ///< Successful batch function calls.
    std::uint64_t batched_items = 0;        ///< Items encoded by successful batch function calls.
    std::uint64_t failed_batches = 0;       ///< Batch function calls that threw or returned a wrong count.
    std::uint64_t dropped = 0;              ///< Items that left the queue on a stop request.
    std::array<std::uint64_t, 16> sizes{};  ///< sizes[i]: successful batches of size i+1 (last: 16+).
    std::uint64_t length_units = 0;         ///< Successful batches: sum of size x longest length.
    std::uint64_t padded_units = 0;         ///< Successful batches: the part of length_units that is padding.
  };

  /// Throws Error(config) for max_batch_size or workers below 1, a negative wait, or a grouping whose
  /// bound is outside [0, 1].
  BatchCoalescer(BatchFn batch, std::size_t max_batch_size, std::chrono::microseconds max_batch_wait,
                 std::size_t workers = 1, BatchGrouping grouping = {}, LengthFn length = {})
      : batch_(std::move(batch)),
        max_batch_size_(max_batch_size),
        max_batch_wait_(max_batch_wait),
        grouping_(grouping),
        length_(std::move(length)) {
    if (max_batch_size_ < 1) throw Error(ErrorKind::config, "max_batch_size must be at least 1");
    if (max_batch_wait_.count() < 0) throw Error(ErrorKind::config, "max_batch_wait must not be negative");
    if (workers < 1) throw Error(ErrorKind::config, "batch workers must be at least 1");
    if (!(grouping_.max_padding_waste >= 0 && grouping_.max_padding_waste <= 1))
      throw Error(ErrorKind::config, "max_padding_waste must be within [0, 1]");
    for (std::size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { run(); });
  }

  ~BatchCoalescer() { close(); }
  BatchCoalescer(const BatchCoalescer&) = delete;
  BatchCoalescer& operator=(const BatchCoalescer&) = delete;

  /// Queues `item` (which must outlive the call) and blocks until a batch has encoded it. Returns the
  /// artifact, or no value when its batch failed (the caller then encodes it alone). Throws
  /// Error(closed) when the coalescer is closed before the item is taken into a batch, and
  /// Error(cancelled) when `stop` is signalled before then (the item leaves the queue).
  /// `padding`, when given, receives the padded fraction of the item's batch, and `batch_id` its id:
  /// batches are numbered from 1 in the order this coalescer takes them, so requests that share an id
  /// were encoded by one call.
  std::optional<ArtifactT> submit(const InputT& item, int* batch_size = nullptr, std::stop_token stop = {},
                                  double* padding = nullptr, std::uint64_t* batch_id = nullptr) {
    Slot slot;
    slot.item = &item;
    if (length_) slot.length = length_(item);
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
    if (padding) *padding = slot.padding;
    if (batch_id) *batch_id = slot.batch_id;
    return std::move(slot.result);
  }

  /// Stops the workers after the batches they are running, and fails every queued item with Error(closed).
  /// Idempotent.
  void close() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      closed_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& w : workers_)
      if (w.joinable()) w.join();
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
    std::size_t length = 0;
    int batch_size = 0;
    double padding = 0;
    std::uint64_t batch_id = 0;
    std::optional<ArtifactT> result;
  };

  /// Takes the next batch out of the queue (mutex held): the oldest item, then queued items in order
  /// while the grouping allows them, up to max_batch_size.
  std::vector<Slot*> take_batch() {
    std::vector<Slot*> slots;
    std::size_t longest = 0, sum = 0;
    for (auto it = queue_.begin(); it != queue_.end() && slots.size() < max_batch_size_;) {
      Slot* s = *it;
      bool fits = slots.empty() || grouping_.mode == BatchGrouping::Mode::none;
      if (!fits && grouping_.mode == BatchGrouping::Mode::exact) fits = s->length == slots.front()->length;
      if (!fits) {
        std::size_t l = std::max(longest, s->length), n = slots.size() + 1;
        fits =
            l == 0 || 1.0 - static_cast<double>(sum + s->length) / (static_cast<double>(l) * static_cast<double>(n)) <=
                          grouping_.max_padding_waste;
      }
      if (!fits) {
        ++it;
        continue;
      }
      longest = std::max(longest, s->length);
      sum += s->length;
      slots.push_back(s);
      it = queue_.erase(it);
    }
    return slots;
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (closed_) return;
      const auto deadline = queue_.front()->enqueued + max_batch_wait_;
      work_cv_.wait_until(lock, deadline, [&] { return closed_ || queue_.size() >= max_batch_size_; });
      if (closed_) return;
      if (queue_.empty()) continue;  // every item waiting left on a stop request, or another worker took them
      std::vector<Slot*> slots = take_batch();
      const std::size_t n = slots.size();
      const std::uint64_t batch_id = ++next_batch_id_;
      if (!queue_.empty()) work_cv_.notify_one();  // what this batch left behind may make another
      lock.unlock();

      std::vector<const InputT*> items;
      std::vector<std::size_t> lengths;
      items.reserve(n);
      for (Slot* s : slots) items.push_back(s->item), lengths.push_back(s->length);
      const double padding = padded_fraction(lengths);
      const std::size_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
      std::size_t sum = 0;
      for (std::size_t l : lengths) sum += l;
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
        stats_.length_units += longest * n;
        stats_.padded_units += longest * n - sum;
      } else {
        ++stats_.failed_batches;
      }
      for (std::size_t i = 0; i < n; ++i) {
        slots[i]->batch_size = static_cast<int>(n);
        slots[i]->padding = padding;
        slots[i]->batch_id = batch_id;
        if (ok) slots[i]->result.emplace(std::move(out[i]));
        slots[i]->done = true;
      }
      done_cv_.notify_all();
    }
  }

  BatchFn batch_;
  const std::size_t max_batch_size_;
  const std::chrono::microseconds max_batch_wait_;
  const BatchGrouping grouping_;
  const LengthFn length_;
  mutable std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable_any done_cv_;  // _any: waits can end on a stop token
  std::deque<Slot*> queue_;
  bool closed_ = false;
  std::uint64_t next_batch_id_ = 0;  ///< Ids of the batches taken so far.
  Stats stats_;
  std::vector<std::thread> workers_;
};

}  // namespace refenc
