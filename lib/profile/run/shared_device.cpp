#include "profile/run/shared_device.hpp"

#include <algorithm>

namespace refenc::profile {
namespace {

constexpr double kMinFactor = 1e-3;

/// Linear through (x0, y0), (x1, y1) evaluated at x (x0 != x1).
double lerp(double x0, double y0, double x1, double y1, double x) { return y0 + (y1 - y0) * (x - x0) / (x1 - x0); }

}  // namespace

SharedDevice::SharedDevice(std::vector<std::pair<int, double>> capacity, std::vector<double> lengths_s,
                           std::vector<SlowdownLevel> slowdown, std::vector<BatchSlowdown> batch_slowdown)
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

  if (slowdown_.empty()) return;
  std::sort(batch_slowdown.begin(), batch_slowdown.end(), [](const BatchSlowdown& a, const BatchSlowdown& b) {
    return std::pair(a.batch, a.concurrency) < std::pair(b.batch, b.concurrency);
  });
  for (BatchSlowdown& s : batch_slowdown) {
    if (s.batch < 2 || s.concurrency < 2 || s.factor.size() != lengths_s_.size()) continue;
    for (double& f : s.factor) f = std::max(kMinFactor, f);
    if (batches_.empty() || batches_.back().batch != s.batch) batches_.push_back({s.batch, {}});
    std::vector<BatchSlowdown>& levels = batches_.back().levels;
    if (levels.empty() || levels.back().concurrency != s.concurrency) levels.push_back(std::move(s));
  }
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

double SharedDevice::at_length(const std::vector<double>& f, double length_s) const {
  if (length_s <= lengths_s_.front()) return f.front();
  if (length_s >= lengths_s_.back()) return f.back();
  const std::size_t hi =
      static_cast<std::size_t>(std::upper_bound(lengths_s_.begin(), lengths_s_.end(), length_s) - lengths_s_.begin());
  return lerp(lengths_s_[hi - 1], f[hi - 1], lengths_s_[hi], f[hi], length_s);
}

double SharedDevice::single_factor(int n, double length_s) const {
  for (std::size_t i = 0; i < slowdown_.size(); ++i) {
    if (slowdown_[i].concurrency == n) return at_length(slowdown_[i].factor, length_s);
    if (slowdown_[i].concurrency > n)  // i > 0: the first level is 1
      return lerp(slowdown_[i - 1].concurrency, at_length(slowdown_[i - 1].factor, length_s), slowdown_[i].concurrency,
                  at_length(slowdown_[i].factor, length_s), n);
  }
  return at_length(slowdown_.back().factor, length_s);
}

double SharedDevice::batch_factor(const BatchRows& rows, int n, double length_s) const {
  int k0 = 1;
  double f0 = 1;  // alone
  for (const BatchSlowdown& level : rows.levels) {
    const double f = at_length(level.factor, length_s);
    if (level.concurrency >= n) return lerp(k0, f0, level.concurrency, f, n);
    k0 = level.concurrency;
    f0 = f;
  }
  // Beyond the last measured level: batch 1's growth from that level on.
  return f0 * single_factor(n, length_s) / single_factor(k0, length_s);
}

double SharedDevice::slowdown(int n, double length_s, int batch) const {
  if (slowdown_.empty()) return 1;
  n = std::max(1, n);
  if (batch <= 1 || batches_.empty()) return single_factor(n, length_s);
  int b0 = 1;
  double f0 = single_factor(n, length_s);
  for (const BatchRows& rows : batches_) {
    const double f = batch_factor(rows, n, length_s);
    if (rows.batch >= batch) return lerp(b0, f0, rows.batch, f, batch);
    b0 = rows.batch;
    f0 = f;
  }
  return f0;
}

double SharedDevice::speed(int n, double length_s, int batch) const {
  return slowdown_.empty() ? speed(n) : 1 / slowdown(n, length_s, batch);
}

void SharedDevice::advance(Clock::time_point now) {
  if (!jobs_.empty() && now > last_) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    const int n = static_cast<int>(jobs_.size());
    for (Job& j : jobs_) j.remaining -= dt * speed(n, j.length_s, j.batch);
  }
  last_ = std::max(last_, now);
}

double SharedDevice::run(double alone_seconds, double length_s, int batch) {
  const auto t0 = Clock::now();
  std::unique_lock lock(mutex_);
  advance(Clock::now());
  auto me = jobs_.insert(jobs_.end(), Job{std::max(0.0, alone_seconds), length_s, std::max(1, batch)});
  ++calls_;
  changed_.notify_all();  // the others change speed
  while (true) {
    advance(Clock::now());
    if (me->remaining <= 1e-9) break;
    const double left = me->remaining / speed(static_cast<int>(jobs_.size()), length_s, me->batch);
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
