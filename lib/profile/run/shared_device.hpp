// SharedDevice: a modelled device whose concurrent calls share it, as threads share a CPU's cores.
// Each call has a progress rate (alone-seconds of work per wall second) that depends on the number n
// of calls in flight and, with a slowdown table, on the call's reference length L:
//   - capacity curve only (processor sharing): rate(n) = effective(n) / n, `effective` being how many
//     lone calls' worth of work n concurrent calls complete together;
//   - with a slowdown table (latency under load measured per length): rate(n, L) = 1 / slowdown(n, L),
//     so at a steady n a call lasts its alone time times the measured slowdown for its length.
// A call's work is its alone time; callers sleep (no host CPU) until their work is done, and every
// arrival or departure re-times the others.
//
//   refenc::profile::SharedDevice cpu({{1, 1.0}, {2, 1.7}, {8, 1.9}});
//   double elapsed = cpu.run(0.200);      // a 200 ms call; longer while others share the device
//   double speed = cpu.speed(4);          // effective(4) / 4: each of 4 calls' share
//   refenc::profile::SharedDevice loaded({}, {3, 12}, {{8, {3.0, 1.5}}});
//   double rate = loaded.speed(8, 3);     // 1 / 3: a 3 s call among 8 lasts 3x its alone time
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <utility>
#include <vector>

#include "profile/record/calibration.hpp"

namespace refenc::profile {

class SharedDevice {
 public:
  using Clock = std::chrono::steady_clock;

  /// `capacity`: (concurrency, effective) points; (1, 1) is implied when absent. Between points the
  /// curve is linear, beyond the last it stays flat. Effective values below 1e-3 count as 1e-3.
  /// `slowdown` (levels over `lengths_s`, as in a calibration's sharing): when not empty it replaces
  /// the capacity curve. Factors are linear in n between levels (1 at n = 1 unless measured, flat
  /// beyond the last level) and linear in L between lengths (clamped outside them); below 1e-3 they
  /// count as 1e-3.
  explicit SharedDevice(std::vector<std::pair<int, double>> capacity, std::vector<double> lengths_s = {},
                        std::vector<SlowdownLevel> slowdown = {});

  /// Each call's speed (relative to alone) with `n` calls in flight, by the capacity curve.
  double speed(int n) const;
  /// The speed of a call of `length_s` seconds of reference with `n` calls in flight: 1 / slowdown(n,
  /// length_s) with a slowdown table, else speed(n).
  double speed(int n, double length_s) const;
  /// The slowdown table's factor for `n` calls in flight and a call of `length_s` (1 without a table).
  double slowdown(int n, double length_s) const;
  /// Runs a call of `alone_seconds` of work on a reference of `length_s` seconds (a batch: its
  /// longest); blocks until done. Returns the wall seconds it took.
  double run(double alone_seconds, double length_s = 0);

  std::uint64_t calls() const;

 private:
  struct Job {
    double remaining;  ///< Alone-seconds of work left.
    double length_s;   ///< Reference seconds (picks the slowdown row).
  };
  /// Charges the work done since the last event to every job (lock held).
  void advance(Clock::time_point now);
  /// The factor of slowdown level `level` at `length_s`: linear between lengths, clamped outside.
  double level_factor(std::size_t level, double length_s) const;

  std::vector<std::pair<int, double>> capacity_;
  std::vector<double> lengths_s_;
  std::vector<SlowdownLevel> slowdown_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Job> jobs_;
  Clock::time_point last_{};
  std::uint64_t calls_ = 0;
};

}  // namespace refenc::profile
