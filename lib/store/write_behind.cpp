#include "store/write_behind.hpp"

#include <pthread.h>
#include <sched.h>

#include <system_error>

#include "core/log.hpp"

namespace refenc::store {

WriteBehind::WriteBehind(std::shared_ptr<SecondTier<Artifact>> target, std::size_t max_pending_bytes)
    : target_(std::move(target)), max_pending_bytes_(max_pending_bytes) {
  try {
    worker_ = std::thread([this] { run(); });
  } catch (const std::exception& e) {
    log::warn(std::string("write-behind: no fill thread, fills are written on the request thread: ") + e.what());
  }
}

WriteBehind::~WriteBehind() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void WriteBehind::store(const ReferenceEncodeKey& key, std::shared_ptr<const Artifact> stored) noexcept {
  if (!stored) return;
  const std::size_t bytes = stored->byte_size();
  if (worker_.joinable()) {  // set once, by the constructor
    std::unique_lock lock(mutex_);
    if (!stopping_ && pending_bytes_ + bytes <= max_pending_bytes_) {
      try {
        queue_.emplace_back(key, std::move(stored));
        pending_bytes_ += bytes;
        lock.unlock();
        wake_.notify_one();
        return;
      } catch (const std::exception& e) {  // no memory for the queue: write here instead
        log::warn(std::string("write-behind: writing on the request thread: ") + e.what());
      }
    }
  }
  target_->store(key, *stored);
}

void WriteBehind::flush() noexcept {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && !writing_; });
}

void WriteBehind::run() {
  // SCHED_BATCH for this thread only: its wake-ups do not preempt the request threads (Linux applies
  // a policy per thread; lowering it needs no privilege). Where it is refused, the worker runs as is.
  const sched_param normal{};
  ::pthread_setschedparam(::pthread_self(), SCHED_BATCH, &normal);
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and every queued write is done
    auto [key, stored] = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    target_->store(key, *stored);  // noexcept
    const std::size_t bytes = stored->byte_size();
    stored.reset();
    lock.lock();
    writing_ = false;
    pending_bytes_ -= bytes;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace refenc::store
