// DeviceQueue: a modelled device that runs one call at a time per stream, first come first served, and
// costs no host CPU. A call is placed on the device's timeline when it is submitted -- it starts when
// its stream frees up (or at once), ends `cost` later -- and the caller sleeps until that modelled end.
// A caller woken late does not delay the calls queued behind it, so the device's throughput stays what
// its costs say on a busy host. Used by the synthetic device of bench_batching and of the capacity
// sweep's checks, and reusable by any modelled encoder.
//
//   DeviceQueue gpu(/*streams=*/1);
//   DeviceQueue::Call c = gpu.run(std::chrono::milliseconds(22));   // sleeps until c.end
//   double waited_ms = std::chrono::duration<double, std::milli>(c.start - c.submitted).count();
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

namespace refenc::profile {

class DeviceQueue {
 public:
  using Clock = std::chrono::steady_clock;

  /// Where a call sat on the modelled timeline.
  struct Call {
    Clock::time_point submitted, start, end;
    int stream = 0;
  };

  /// A device with `streams` (>= 1) independent FIFO streams; a call takes the earliest free one.
  explicit DeviceQueue(int streams = 1);

  /// Places a call costing `cost` and sleeps until its modelled end.
  Call run(Clock::duration cost);

  /// Places a call costing `cost`, submitted at `now`, without sleeping (the timeline alone).
  Call place(Clock::duration cost, Clock::time_point now);

  /// Calls placed so far.
  std::size_t calls() const;

 private:
  mutable std::mutex mutex_;
  std::vector<Clock::time_point> free_at_;
  std::size_t calls_ = 0;
};

}  // namespace refenc::profile
