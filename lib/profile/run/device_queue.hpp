// DeviceQueue: a modelled accelerator (or a CPU modelled as streams) that runs one call at a time per
// stream, first come first served, and costs no host CPU: a caller reserves the stream that frees
// first for the call's modelled duration and sleeps until the call's end. Reusable by anything that
// needs a device whose service times are known (the modelled encoder, benchmarks' synthetic devices).
//
// Reservation happens under one lock at the call's arrival, so calls start in arrival order; a call
// arriving while every stream is busy waits for the earliest-free one. The clock advances by the
// modelled durations (stream free times), not by sleep overshoot.
//
//   refenc::profile::DeviceQueue gpu(1);                     // one stream
//   auto slot = gpu.run(0.010);                              // sleeps ~10 ms plus any queueing
//   double waited = std::chrono::duration<double>(slot.start - slot.arrival).count();
//   auto planned = gpu.reserve(DeviceQueue::Clock::now(), 0.25);   // no sleep: the plan only
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace refenc::profile {

class DeviceQueue {
 public:
  using Clock = std::chrono::steady_clock;

  /// One call's place on the device.
  struct Slot {
    Clock::time_point arrival;  ///< When the call asked for the device.
    Clock::time_point start;    ///< When its stream took it.
    Clock::time_point end;      ///< When it finishes.
    int stream = 0;             ///< Which stream ran it.
  };

  /// A device with `streams` streams (values below 1 count as 1).
  explicit DeviceQueue(int streams = 1);

  /// Reserves the earliest-free stream for `seconds` (negative counts as 0) for a call arriving at
  /// `now`; no sleeping. Ties go to the lowest stream number.
  Slot reserve(Clock::time_point now, double seconds);

  /// reserve(Clock::now(), seconds), then sleeps until the call's end.
  Slot run(double seconds);

  int streams() const noexcept { return static_cast<int>(free_at_.size()); }
  /// Calls reserved so far.
  std::uint64_t calls() const;
  /// Sum of the reserved durations, seconds (device busy time over all streams).
  double busy_seconds() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Clock::time_point> free_at_;
  std::uint64_t calls_ = 0;
  double busy_s_ = 0;
};

}  // namespace refenc::profile
