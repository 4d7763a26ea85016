// The calibration engine behind `refenc calibrate`: times a device's calls alone over a grid of batch
// sizes and reference lengths, then under sharing levels (k concurrent callers of batch 1) and batches
// under load, all in interleaved rounds, and derives the calibration's measured fields. It knows no
// encoder and no LibTorch: the device is a callable that runs one described call and returns its
// latency, so the CLI binds it to a real network and the tests to a modelled device.
//
// Rounds: one warm-up call per grid point, then `repeats` rounds; each times every grid point once
// (odd rounds in reverse) and then measures every sharing series once. A level's factors are ratios
// to the one-caller level of the same round and the calibration keeps their median over rounds; its
// `spread` is the pooled standard deviation of ln latency within a length and round
// (reports/calibration.md, "Sharing").
//
//   CalibrationPlan plan{.batch_sizes = batch_sizes_up_to(8), .lengths_s = {2, 5, 10}, .repeats = 3,
//                        .concurrency = {2, 8}, .batch_levels = batch_levels({2, 8}, {}, 2, 4)};
//   Calibration c;
//   measure_calibration(plan, [&](const TimedCall& call) { return encode_ms(call.batch, call.length, call.slot); }, c);
//   double alone_ms = c.time_ms[0][2];             // batch 1, 10 s, the median of 3 rounds
//   double at8 = c.sharing.slowdown.back().factor[0];  // a 2 s call among 8 callers, over alone
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "profile/record/calibration.hpp"

namespace refenc::profile {

/// One call the engine times.
struct TimedCall {
  int batch = 1;           ///< References in the call.
  std::size_t length = 0;  ///< Index into the plan's lengths_s.
  std::size_t slot = 0;    ///< First content slot: the binding cycles through its clips from here, so
                           ///< each point's samples cover every slot's content.
  int callers = 1;         ///< Callers in flight at its level (1: the grid or the one-caller level).
  int caller = 0;          ///< Which of them, from 0.
  int round = -1;          ///< The round, from 0; -1 for a warm-up call.
};

/// Runs one call and returns its latency in milliseconds. Called from several threads at once at
/// sharing levels above 1. A real device's binding measures the call's wall time and ignores `callers`;
/// a modelled device may compute the latency from it.
using TimeCall = std::function<double(const TimedCall&)>;

/// What to measure.
struct CalibrationPlan {
  std::vector<int> batch_sizes;   ///< Ascending from 1 (batch_sizes_up_to).
  std::vector<double> lengths_s;  ///< Ascending, distinct, > 0.
  int repeats = 3;                ///< Rounds.
  std::vector<int> concurrency;   ///< Sharing levels besides 1; empty: sharing not measured.
  std::vector<int> batch_levels;  ///< Callers of each batch size above 1 under load (each >= 2); empty: none.
};

/// The engine's clock and progress.
struct CalibratorOptions {
  /// Monotonic seconds, read around each sharing level to give its calls per second (default: the
  /// steady clock). A modelled device without real time gives its own.
  std::function<double()> clock;
  /// Called after each round (0-based), e.g. to print progress.
  std::function<void(int round)> on_round;
};

/// 1, 2, 4, ... below `max`, then `max`.
std::vector<int> batch_sizes_up_to(int max);

/// The callers of batches under load: `batch_concurrency` as given ({0}: none), by default
/// min(cores, the largest of `concurrency`) and at least 2 (M4b's matched batch workers at that
/// concurrency on this host); none without `concurrency` or with one batch size. Ascending, distinct.
std::vector<int> batch_levels(const std::vector<int>& concurrency, const std::vector<int>& batch_concurrency,
                              unsigned cores, std::size_t batch_sizes);

/// Runs `plan` on `call` and fills `c`'s measured fields: batch_sizes, lengths_s, time_ms, the batch-1
/// fit (overhead_ms, per_audio_second_ms), sharing (capacity, slowdown with spreads, batch_slowdown,
/// measured_concurrency, throughput_per_s, streams, stream_slowdown; left as they are without
/// `plan.concurrency`), and appends the sharing method to c.assumptions.
void measure_calibration(const CalibrationPlan& plan, const TimeCall& call, Calibration& c,
                         const CalibratorOptions& options = {});

}  // namespace refenc::profile
