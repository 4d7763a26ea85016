// WriteBehind: writes entries into a tier on a thread of its own, so that a request answered by one
// tier does not wait while another (the local disk, with its fsync) is filled with the same entry.
//
// TierChain uses it for shared hits: Redis answers in tens of microseconds, the disk's atomic write
// (temp file, fsync, rename) takes milliseconds. The writes stay atomic and checksummed, so a crash
// mid-write leaves at worst a temporary file or no entry, never a torn one that loads. Writes of one
// WriteBehind run in queue order on one thread. When more than `max_pending_bytes` wait, store() writes
// on the caller's thread instead (back-pressure: memory stays bounded, no fill is dropped). The
// destructor writes what is queued before it returns, so a one-shot process leaves its disk filled.
//
// The worker starts with the WriteBehind, not with the first write, and runs under SCHED_BATCH: the
// same share of the CPU as a normal thread, but its wake-up never preempts the thread that queued
// the write. Measured inside a profile cell, a normal worker took the request's core as soon as it
// was woken, and queueing a fill cost the request 0.4-0.7 ms (the worker's encode and write); a first
// write that started the thread cost 0.5-1.8 ms.
//
//   store::WriteBehind fill(store::open_disk_tier({.root = dir}));
//   fill.store(key, artifact_ptr);   // returns at once
//   fill.flush();                    // waits until every queued entry is on disk
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "core/second_tier.hpp"
#include "store/artifact.hpp"

namespace refenc::store {

class WriteBehind {
 public:
  /// Fills `target` (not null) and starts the worker (when no thread can start, store() writes on
  /// the caller's thread).
  explicit WriteBehind(std::shared_ptr<SecondTier<Artifact>> target, std::size_t max_pending_bytes = 256u << 20);
  /// Writes what is queued, then stops the worker.
  ~WriteBehind();
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  /// Queues a write of `stored` under `key` and returns; writes at once when the queue is full (by
  /// bytes) or there is no worker. Never throws.
  void store(const ReferenceEncodeKey& key, std::shared_ptr<const Artifact> stored) noexcept;
  /// Returns when every write queued before the call has finished.
  void flush() noexcept;

 private:
  void run();

  std::shared_ptr<SecondTier<Artifact>> target_;
  const std::size_t max_pending_bytes_;
  std::mutex mutex_;
  std::condition_variable wake_;  ///< The worker: work queued or stopping.
  std::condition_variable idle_;  ///< flush(): the queue drained and nothing is being written.
  std::deque<std::pair<ReferenceEncodeKey, std::shared_ptr<const Artifact>>> queue_;
  std::size_t pending_bytes_ = 0;  ///< Bytes of the queued entries and of the one being written.
  bool writing_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace refenc::store
