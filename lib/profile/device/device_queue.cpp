#include "profile/device/device_queue.hpp"

#include <algorithm>
#include <functional>
#include <thread>

#include "core/error.hpp"

namespace refenc::profile {

DeviceQueue::DeviceQueue(int streams, Clock::duration catch_up) : catch_up_(catch_up) {
  if (streams < 1) throw Error(ErrorKind::config, "device queue needs at least one stream");
  free_at_.assign(static_cast<std::size_t>(streams), Clock::time_point{});
}

DeviceQueue::Call DeviceQueue::place(Clock::duration cost, Clock::time_point now, std::uint64_t caller) {
  std::lock_guard lock(mutex_);
  Call c;
  c.submitted = now;
  if (caller != 0)
    if (auto last = last_end_.find(caller);
        last != last_end_.end() && now >= last->second && now - last->second <= catch_up_)
      c.submitted = last->second;  // came straight back: as if at its previous call's end
  auto it = std::min_element(free_at_.begin(), free_at_.end());
  c.start = std::max(c.submitted, *it);
  c.end = c.start + cost;
  c.stream = static_cast<int>(it - free_at_.begin());
  *it = c.end;
  ++calls_;
  if (caller != 0) {
    if (last_end_.size() > 4096)  // forget callers long gone
      std::erase_if(last_end_, [&](const auto& e) { return e.second + catch_up_ < now; });
    last_end_[caller] = c.end;
  }
  return c;
}

DeviceQueue::Call DeviceQueue::run(Clock::duration cost, bool resume) {
  const std::uint64_t caller = resume ? std::hash<std::thread::id>{}(std::this_thread::get_id()) | 1 : 0;
  Call c = place(cost, Clock::now(), caller);
  std::this_thread::sleep_until(c.end);
  return c;
}

std::size_t DeviceQueue::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

}  // namespace refenc::profile
