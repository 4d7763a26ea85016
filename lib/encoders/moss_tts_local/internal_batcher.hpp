// InternalBatcher: the MOSS-TTS Local encoder's own batching, inside its encode_one path.
//
// Concurrent encode_one calls queue their clip; the first caller with no batch running becomes the
// leader, waits up to `max_wait` for company (or until `max_batch` clips are queued), takes up to
// `max_batch` clips in arrival order, runs them as one zero-padded (B, 1, Tmax) network call and hands
// each caller its own result (or the batch's error). Callers queued meanwhile lead the next batch.
// No thread of its own; one network call at a time.
//
//   InternalBatcher<In, Out> b(8, std::chrono::microseconds(4000), [&](std::span<const In* const> xs) {
//     return net.encode(xs);
//   });
//   Out out = b.run(clip);   // blocks until the batch holding `clip` has run
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "core/error.hpp"

namespace refenc::encoders {

template <class In, class Out>
class InternalBatcher {
 public:
  using Run = std::function<std::vector<Out>(std::span<const In* const>)>;

  InternalBatcher(std::size_t max_batch, std::chrono::microseconds max_wait, Run run)
      : max_batch_(max_batch < 1 ? 1 : max_batch), max_wait_(max_wait), run_(std::move(run)) {}

  /// Encodes `item` in a batch with whatever else is queued; rethrows the batch's error.
  Out run(const In& item) {
    Slot slot{&item};
    std::unique_lock lock(mutex_);
    queue_.push_back(&slot);
    cv_.notify_all();
    while (!slot.done) {
      if (running_) {
        cv_.wait(lock);
        continue;
      }
      running_ = true;
      cv_.wait_for(lock, max_wait_, [&] { return queue_.size() >= max_batch_; });
      const std::size_t n = std::min(queue_.size(), max_batch_);
      std::vector<Slot*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      lock.unlock();
      std::vector<const In*> inputs;
      for (Slot* s : batch) inputs.push_back(s->item);
      std::vector<Out> outs;
      std::exception_ptr error;
      try {
        outs = run_(inputs);
        if (outs.size() != batch.size()) throw Error(ErrorKind::encode, "batched encode returned a wrong count");
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (error) {
          batch[i]->error = error;
        } else {
          batch[i]->out.emplace(std::move(outs[i]));
        }
        batch[i]->done = true;
      }
      ++stats_batches_;
      stats_items_ += batch.size();
      largest_ = std::max(largest_, static_cast<int>(batch.size()));
      running_ = false;
      cv_.notify_all();
    }
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.out);
  }

  std::uint64_t batches() const {
    std::lock_guard l(mutex_);
    return stats_batches_;
  }
  std::uint64_t items() const {
    std::lock_guard l(mutex_);
    return stats_items_;
  }
  int largest() const {
    std::lock_guard l(mutex_);
    return largest_;
  }

 private:
  struct Slot {
    const In* item;
    std::optional<Out> out;
    std::exception_ptr error;
    bool done = false;
  };

  const std::size_t max_batch_;
  const std::chrono::microseconds max_wait_;
  Run run_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Slot*> queue_;
  bool running_ = false;
  std::uint64_t stats_batches_ = 0, stats_items_ = 0;
  int largest_ = 0;
};

}  // namespace refenc::encoders
