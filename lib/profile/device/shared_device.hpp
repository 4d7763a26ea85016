// SharedDevice: a modelled device whose concurrent calls share it, as threads share a CPU's cores.
// Each call has a progress rate (alone-seconds of work per wall second) that depends on the number n
// of calls in flight and, with a slowdown table, on the call's reference length L:
//   - capacity curve only (processor sharing): rate(n) = effective(n) / n, `effective` being how many
//     lone calls' worth of work n concurrent calls complete together;
//   - with a slowdown table (latency under load measured per length): rate(n, L) = 1 / slowdown(n, L),
//     so at a steady n a call lasts its alone time times the measured slowdown for its length;
//   - with batch rows as well (batches of b under load, measured at some concurrency k): a batch
//     call's factor comes from the rows of its size (see slowdown()).
// A call's work is its alone time; callers sleep (no host CPU) until their work is done, and every
// arrival or departure re-times the others. With measured spreads (the levels' `spread`), a call's
// factor is also multiplied by exp(sigma z - sigma^2 / 2), sigma = spread(n, batch) and z the call's own
// standard normal: at a steady n, the latencies of one length then vary as the measured ones did, with
// the measured mean (without it every call of a length at a given n would last exactly as long).
//
//   refenc::profile::SharedDevice cpu({{1, 1.0}, {2, 1.7}, {8, 1.9}});
//   double elapsed = cpu.run(0.200);      // a 200 ms call; longer while others share the device
//   double speed = cpu.speed(4);          // effective(4) / 4: each of 4 calls' share
//   refenc::profile::SharedDevice loaded({}, {3, 12}, {{8, {3.0, 1.5}}});
//   double rate = loaded.speed(8, 3);     // 1 / 3: a 3 s call among 8 lasts 3x its alone time
//   refenc::profile::SharedDevice batched({}, {3, 12}, {{2, {1.0, 1.0}}}, {{8, 2, {1.2, 1.1}}});
//   double f = batched.slowdown(2, 3, 8); // 1.2: a batch of 8 beside another call lasts 1.2x alone
//   cpu.run(0.200, 3, 1, refenc::profile::standard_normal(content_seed));  // this call's draw of the spread
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
  /// `batch_slowdown` (as in a calibration's sharing; used only with `slowdown`): see slowdown().
  explicit SharedDevice(std::vector<std::pair<int, double>> capacity, std::vector<double> lengths_s = {},
                        std::vector<SlowdownLevel> slowdown = {}, std::vector<BatchSlowdown> batch_slowdown = {});

  /// Each call's speed (relative to alone) with `n` calls in flight, by the capacity curve.
  double speed(int n) const;
  /// The speed of a call of `batch` references of `length_s` seconds with `n` calls in flight:
  /// 1 / slowdown(n, length_s, batch) with a slowdown table, else speed(n).
  double speed(int n, double length_s, int batch = 1) const;
  /// The slowdown table's factor for `n` calls in flight and a call of `batch` references of
  /// `length_s` (1 without a table). A batch size with rows: linear in n from 1 (n = 1) through its
  /// measured levels; beyond its last level k, that level's factor times slowdown(n, L) / slowdown(k, L)
  /// of batch 1. Between batch sizes with rows (batch 1 always has them): linear in the batch size;
  /// above the largest: the largest's.
  double slowdown(int n, double length_s, int batch = 1) const;
  /// The measured spread (sigma of ln latency) of a call of `batch` references with `n` calls in flight,
  /// 0 without one: as slowdown() over the levels' `spread`, except flat beyond a batch size's last
  /// level, and a batch size's spread at n = 1 is batch 1's.
  double spread(int n, int batch = 1) const;
  /// Runs a call of `alone_seconds` of work on `batch` references, the longest `length_s` seconds,
  /// `z` its standard normal for the spread (clamped to [-4, 4], so that no draw stalls a run); blocks
  /// until done. Returns the wall seconds it took.
  double run(double alone_seconds, double length_s = 0, int batch = 1, double z = 0);

  std::uint64_t calls() const;

 private:
  struct Job {
    double remaining;  ///< Alone-seconds of work left.
    double length_s;   ///< Reference seconds (picks the slowdown factor).
    int batch;         ///< References in the call (picks the slowdown rows).
    double z;          ///< Its standard normal for the spread.
  };
  /// One batch size's measured levels, ascending by concurrency.
  struct BatchRows {
    int batch;
    std::vector<BatchSlowdown> levels;
  };
  /// Charges the work done since the last event to every job (lock held).
  void advance(Clock::time_point now);
  /// `factor` at `length_s`: linear between lengths, clamped outside.
  double at_length(const std::vector<double>& factor, double length_s) const;
  /// The batch-1 table's factor (`slowdown_` non-empty).
  double single_factor(int n, double length_s) const;
  /// `rows`' factor for n calls in flight.
  double batch_factor(const BatchRows& rows, int n, double length_s) const;
  /// Linear in the batch size from batch 1's `single` through each row set's `at(rows)`, the largest's
  /// above them.
  template <class At>
  double across_batches(int batch, double single, At at) const;
  /// A job's speed with `n` in flight: speed(n, length, batch) over its spread draw.
  double job_speed(int n, const Job& j) const;

  std::vector<std::pair<int, double>> capacity_;
  std::vector<double> lengths_s_;
  std::vector<SlowdownLevel> slowdown_;
  std::vector<BatchRows> batches_;  ///< Ascending by batch size, each above 1.
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::list<Job> jobs_;
  Clock::time_point last_{};
  std::uint64_t calls_ = 0;
};

/// A standard normal drawn from `seed` (Box-Muller over splitmix64): the same seed, the same value.
double standard_normal(std::uint64_t seed);

}  // namespace refenc::profile
