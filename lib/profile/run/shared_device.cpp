#include "profile/run/shared_device.hpp"

#include <algorithm>

namespace refenc::profile {
namespace {

constexpr double kMinFactor = 1e-3;

/// Linear through (x0, y0), (x1, y1) evaluated at x (x0 != x1).
double lerp(double x0, double y0, double x1, double y1, double x) { return y0 + (y1 - y0) * (x - x0) / (x1 - x0); }

}  // namespace

SharedDevice::SharedDevice(std::vector<std::pair<int, double>> capacity, std::vector<double> lengths_s,
                           std::vector<SlowdownLevel> slowdown)
    : capacity_(std::move(capacity)), lengths_s_(std::move(lengths_s)), slowdown_(std::move(slowdown)) {
  std::sort(capacity_.begin(), capacity_.end());
  capacity_.erase(std::remove_if(capacity_.begin(), capacity_.end(), [](const auto& p) { return p.first < 1; }),
                  capacity_.end());
  if (capacity_.empty() || capacity_.front().first != 1) capacity_.insert(capacity_.begin(), {1, 1.0});
  for (auto& p : capacity_) p.second = std::max(1e-3, p.second);

  std::sort(slowdown_.begin(), slowdown_.end(),
            [](const SlowdownLevel& a, const SlowdownLevel& b) { return a.concurrency < b.concurrency; });
  slowdown_.erase(std::remove_if(slowdown_.begin(), slowdown_.end(),
                                 [&](const SlowdownLevel& s) {
                                   return s.concurrency < 1 || lengths_s_.empty() ||
                                          s.factor.size() != lengths_s_.size();
                                 }),
                  slowdown_.end());
  if (!slowdown_.empty() && slowdown_.front().concurrency != 1)
    slowdown_.insert(slowdown_.begin(), SlowdownLevel{1, std::vector<double>(lengths_s_.size(), 1.0)});
  for (SlowdownLevel& s : slowdown_)
    for (double& f : s.factor) f = std::max(kMinFactor, f);
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
      eff = lerp(x0, y0, x1, y1, n);
      break;
    }
  }
  return eff / n;
}

double SharedDevice::level_factor(std::size_t level, double length_s) const {
  const std::vector<double>& f = slowdown_[level].factor;
  if (length_s <= lengths_s_.front()) return f.front();
  if (length_s >= lengths_s_.back()) return f.back();
  const std::size_t hi =
      static_cast<std::size_t>(std::upper_bound(lengths_s_.begin(), lengths_s_.end(), length_s) - lengths_s_.begin());
  return lerp(lengths_s_[hi - 1], f[hi - 1], lengths_s_[hi], f[hi], length_s);
}

double SharedDevice::slowdown(int n, double length_s) const {
  if (slowdown_.empty()) return 1;
  n = std::max(1, n);
  for (std::size_t i = 0; i < slowdown_.size(); ++i) {
    if (slowdown_[i].concurrency == n) return level_factor(i, length_s);
    if (slowdown_[i].concurrency > n)  // i > 0: the first level is 1
      return lerp(slowdown_[i - 1].concurrency, level_factor(i - 1, length_s), slowdown_[i].concurrency,
                  level_factor(i, length_s), n);
  }
  return level_factor(slowdown_.size() - 1, length_s);
}

double SharedDevice::speed(int n, double length_s) const {
  return slowdown_.empty() ? speed(n) : 1 / slowdown(n, length_s);
}

void SharedDevice::advance(Clock::time_point now) {
  if (!jobs_.empty() && now > last_) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    const int n = static_cast<int>(jobs_.size());
    for (Job& j : jobs_) j.remaining -= dt * speed(n, j.length_s);
  }
  last_ = std::max(last_, now);
}

double SharedDevice::run(double alone_seconds, double length_s) {
  const auto t0 = Clock::now();
  std::unique_lock lock(mutex_);
  advance(Clock::now());
  auto me = jobs_.insert(jobs_.end(), Job{std::max(0.0, alone_seconds), length_s});
  ++calls_;
  changed_.notify_all();  // the others change speed
  while (true) {
    advance(Clock::now());
    if (me->remaining <= 1e-9) break;
    const double left = me->remaining / speed(static_cast<int>(jobs_.size()), length_s);
    const auto due = last_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
    changed_.wait_until(lock, due);
  }
  jobs_.erase(me);
  changed_.notify_all();  // the others change speed
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::uint64_t SharedDevice::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

}  // namespace refenc::profile
