// SharedDevice: a modelled device whose concurrent calls share it (processor sharing), as threads
// share a CPU's cores: with n calls in flight, each progresses at effective(n) / n times the speed it
// has alone, `effective` being the calibration's measured capacity curve (how many lone calls' worth of
// work n concurrent calls complete together). A call's work is its alone time; callers sleep (no host
// CPU) until their work is done, and every arrival or departure re-times the others.
//
//   refenc::profile::SharedDevice cpu({{1, 1.0}, {2, 1.7}, {8, 1.9}});
//   double elapsed = cpu.run(0.200);      // a 200 ms call; longer while others share the device
//   double speed = cpu.speed(4);          // effective(4) / 4: each of 4 calls' share
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

namespace refenc::profile {

class SharedDevice {
 public:
  using Clock = std::chrono::steady_clock;

  /// `capacity`: (concurrency, effective) points; (1, 1) is implied when absent. Between points the
  /// curve is linear, beyond the last it stays flat. Effective values below 1e-3 count as 1e-3.
  explicit SharedDevice(std::vector<std::pair<int, double>> capacity);

  /// Each call's speed (relative to alone) with `n` calls in flight.
  double speed(int n) const;
  /// Runs a call of `alone_seconds` of work; blocks until done. Returns the wall seconds it took.
  double run(double alone_seconds);

  std::uint64_t calls() const;

 private:
  struct Job {
    double remaining;  ///< Alone-seconds of work left.
  };
  /// Charges the work done since the last event to every job (lock held).
  void advance(Clock::time_point now);

  std::vector<std::pair<int, double>> capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Job> jobs_;
  Clock::time_point last_{};
  std::uint64_t calls_ = 0;
};

}  // namespace refenc::profile
