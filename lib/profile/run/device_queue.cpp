#include "profile/run/device_queue.hpp"

#include <algorithm>
#include <thread>

#include "core/error.hpp"

namespace refenc::profile {

DeviceQueue::DeviceQueue(int streams) {
  if (streams < 1) throw Error(ErrorKind::config, "device queue needs at least one stream");
  free_at_.assign(static_cast<std::size_t>(streams), Clock::time_point{});
}

DeviceQueue::Call DeviceQueue::place(Clock::duration cost, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = std::min_element(free_at_.begin(), free_at_.end());
  Call c;
  c.submitted = now;
  c.start = std::max(now, *it);
  c.end = c.start + cost;
  c.stream = static_cast<int>(it - free_at_.begin());
  *it = c.end;
  ++calls_;
  return c;
}

DeviceQueue::Call DeviceQueue::run(Clock::duration cost) {
  Call c = place(cost, Clock::now());
  std::this_thread::sleep_until(c.end);
  return c;
}

std::size_t DeviceQueue::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

}  // namespace refenc::profile
