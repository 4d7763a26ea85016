#include "profile/device/shared_device.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/splitmix64.hpp"
#include "profile/device/linear.hpp"

namespace refenc::profile {
namespace {

constexpr double kMinFactor = 1e-3;

/// `value(level)` linear in n between `levels` (ascending by concurrency), flat outside them.
template <class Level, class Value>
double along_levels(const std::vector<Level>& levels, int n, Value value) {
  if (n <= levels.front().concurrency) return value(levels.front());
  for (std::size_t i = 1; i < levels.size(); ++i)
    if (levels[i].concurrency >= n)
      return linear(levels[i - 1].concurrency, value(levels[i - 1]), levels[i].concurrency, value(levels[i]), n);
  return value(levels.back());
}

/// A uniform in (0, 1) from the top 53 bits of `x`.
double unit(std::uint64_t x) { return (static_cast<double>(x >> 11) + 0.5) / 9007199254740992.0; }

}  // namespace

double standard_normal(std::uint64_t seed) {
  const std::uint64_t a = splitmix64(seed), b = splitmix64(a);
  return std::sqrt(-2 * std::log(unit(a))) * std::cos(2 * std::numbers::pi * unit(b));
}

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
      eff = linear(x0, y0, x1, y1, n);
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
  return linear(lengths_s_[hi - 1], f[hi - 1], lengths_s_[hi], f[hi], length_s);
}

double SharedDevice::single_factor(int n, double length_s) const {
  return along_levels(slowdown_, n, [&](const SlowdownLevel& s) { return at_length(s.factor, length_s); });
}

double SharedDevice::batch_factor(const BatchRows& rows, int n, double length_s) const {
  int k0 = 1;
  double f0 = 1;  // alone
  for (const BatchSlowdown& level : rows.levels) {
    const double f = at_length(level.factor, length_s);
    if (level.concurrency >= n) return linear(k0, f0, level.concurrency, f, n);
    k0 = level.concurrency;
    f0 = f;
  }
  // Beyond the last measured level: batch 1's growth from that level on.
  return f0 * single_factor(n, length_s) / single_factor(k0, length_s);
}

template <class At>
double SharedDevice::across_batches(int batch, double single, At at) const {
  int b0 = 1;
  double v0 = single;
  for (const BatchRows& rows : batches_) {
    const double v = at(rows);
    if (rows.batch >= batch) return linear(b0, v0, rows.batch, v, batch);
    b0 = rows.batch;
    v0 = v;
  }
  return v0;
}

double SharedDevice::slowdown(int n, double length_s, int batch) const {
  if (slowdown_.empty()) return 1;
  n = std::max(1, n);
  const double single = single_factor(n, length_s);
  if (batch <= 1 || batches_.empty()) return single;
  return across_batches(batch, single, [&](const BatchRows& rows) { return batch_factor(rows, n, length_s); });
}

double SharedDevice::spread(int n, int batch) const {
  if (slowdown_.empty()) return 0;
  n = std::max(1, n);
  auto sigma = [](const auto& level) { return level.spread; };
  const double single = along_levels(slowdown_, n, sigma);
  if (batch <= 1 || batches_.empty()) return single;
  const double alone = along_levels(slowdown_, 1, sigma);
  return across_batches(batch, single, [&](const BatchRows& rows) {
    const BatchSlowdown& first = rows.levels.front();
    return n < first.concurrency ? linear(1, alone, first.concurrency, first.spread, n)
                                 : along_levels(rows.levels, n, sigma);
  });
}

double SharedDevice::job_speed(int n, const Job& j) const {
  const double sigma = spread(n, j.batch);
  const double s = speed(n, j.length_s, j.batch);
  return sigma > 0 ? s / std::exp(sigma * j.z - sigma * sigma / 2) : s;
}

double SharedDevice::speed(int n, double length_s, int batch) const {
  return slowdown_.empty() ? speed(n) : 1 / slowdown(n, length_s, batch);
}

void SharedDevice::advance(Clock::time_point now) {
  if (!jobs_.empty() && now > last_) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    const int n = static_cast<int>(jobs_.size());
    for (Job& j : jobs_) j.remaining -= dt * job_speed(n, j);
  }
  last_ = std::max(last_, now);
}

double SharedDevice::run(double alone_seconds, double length_s, int batch, double z) {
  const auto t0 = Clock::now();
  std::unique_lock lock(mutex_);
  advance(Clock::now());
  auto me = jobs_.insert(jobs_.end(), Job{std::max(0.0, alone_seconds), length_s, std::max(1, batch), std::clamp(z, -4.0, 4.0)});
  ++calls_;
  changed_.notify_all();  // the others change speed
  while (true) {
    advance(Clock::now());
    if (me->remaining <= 1e-9) break;
    const double left = me->remaining / job_speed(static_cast<int>(jobs_.size()), *me);
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
