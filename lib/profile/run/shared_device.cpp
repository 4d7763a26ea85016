#include "profile/run/shared_device.hpp"

#include <algorithm>

namespace refenc::profile {

SharedDevice::SharedDevice(std::vector<std::pair<int, double>> capacity) : capacity_(std::move(capacity)) {
  std::sort(capacity_.begin(), capacity_.end());
  capacity_.erase(std::remove_if(capacity_.begin(), capacity_.end(), [](const auto& p) { return p.first < 1; }),
                  capacity_.end());
  if (capacity_.empty() || capacity_.front().first != 1) capacity_.insert(capacity_.begin(), {1, 1.0});
  for (auto& p : capacity_) p.second = std::max(1e-3, p.second);
}

double SharedDevice::speed(int n) const {
  n = std::max(1, n);
  double eff = capacity_.back().second;
  for (std::size_t i = 0; i < capacity_.size(); ++i) {
    if (capacity_[i].first == n) {
      eff = capacity_[i].second;
      break;
    }
    if (capacity_[i].first > n) {
      const auto& [x0, y0] = capacity_[i - 1];
      const auto& [x1, y1] = capacity_[i];
      eff = y0 + (y1 - y0) * (n - x0) / static_cast<double>(x1 - x0);
      break;
    }
  }
  return eff / n;
}

void SharedDevice::advance(Clock::time_point now) {
  if (!jobs_.empty() && now > last_) {
    const double done = std::chrono::duration<double>(now - last_).count() * speed(static_cast<int>(jobs_.size()));
    for (Job& j : jobs_) j.remaining -= done;
  }
  last_ = std::max(last_, now);
}

double SharedDevice::run(double alone_seconds) {
  const auto t0 = Clock::now();
  std::unique_lock lock(mutex_);
  advance(Clock::now());
  auto me = jobs_.insert(jobs_.end(), Job{std::max(0.0, alone_seconds)});
  ++calls_;
  changed_.notify_all();  // the others slow down
  while (true) {
    advance(Clock::now());
    if (me->remaining <= 1e-9) break;
    const double left = me->remaining / speed(static_cast<int>(jobs_.size()));
    const auto due = last_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
    changed_.wait_until(lock, due);
  }
  jobs_.erase(me);
  changed_.notify_all();  // the others speed up
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::uint64_t SharedDevice::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

}  // namespace refenc::profile
