#include "profile/run/device_queue.hpp"

#include <algorithm>
#include <thread>

namespace refenc::profile {

DeviceQueue::DeviceQueue(int streams) : free_at_(static_cast<std::size_t>(std::max(1, streams))) {}

DeviceQueue::Slot DeviceQueue::reserve(Clock::time_point now, double seconds) {
  const auto duration =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
  std::lock_guard lock(mutex_);
  auto it = std::min_element(free_at_.begin(), free_at_.end());
  Slot s;
  s.arrival = now;
  s.stream = static_cast<int>(it - free_at_.begin());
  s.start = std::max(now, *it);
  s.end = s.start + duration;
  *it = s.end;
  ++calls_;
  busy_s_ += std::max(0.0, seconds);
  return s;
}

DeviceQueue::Slot DeviceQueue::run(double seconds) {
  Slot s = reserve(Clock::now(), seconds);
  std::this_thread::sleep_until(s.end);
  return s;
}

std::uint64_t DeviceQueue::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

double DeviceQueue::busy_seconds() const {
  std::lock_guard lock(mutex_);
  return busy_s_;
}

}  // namespace refenc::profile
