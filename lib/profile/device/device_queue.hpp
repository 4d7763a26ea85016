// DeviceQueue: a modelled device that runs one call at a time per stream, first come first served, and
// costs no host CPU. A call is placed on the device's timeline when it is submitted -- it starts when
// its stream frees up (or at once), ends `cost` later -- and the caller sleeps until that modelled end.
// A caller woken late does not delay the calls queued behind it, so the device's throughput stays what
// its costs say on a busy host. A worker that feeds the device back to back (a batch worker: `resume`)
// and comes straight back with its next call, within `catch_up` of its previous call's modelled end,
// is placed as if it had come back at that end, so the host's wake-up lateness is not charged to the
// device either; the cost of that is that a request which reached the batch during the lateness starts
// up to `catch_up` before it arrived. Callers that send requests as they arrive (not `resume`) are
// placed when they come. Used by the synthetic device of bench_batching and of the capacity sweep's
// checks, and reusable by any modelled encoder.
//
//   DeviceQueue gpu(/*streams=*/1);
//   DeviceQueue::Call c = gpu.run(std::chrono::milliseconds(22));   // sleeps until c.end
//   double waited_ms = std::chrono::duration<double, std::milli>(c.start - c.submitted).count();
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace refenc::profile {

class DeviceQueue {
 public:
  using Clock = std::chrono::steady_clock;

  /// Where a call sat on the modelled timeline.
  struct Call {
    Clock::time_point submitted, start, end;  ///< submitted: as placed (after any catch-up).
    int stream = 0;
  };

  /// A device with `streams` (>= 1) independent FIFO streams; a call takes the earliest free one.
  explicit DeviceQueue(int streams = 1, Clock::duration catch_up = std::chrono::milliseconds(5));

  /// Places a call costing `cost` for the calling thread (`resume`: with the catch-up above) and sleeps
  /// until its modelled end.
  Call run(Clock::duration cost, bool resume = false);

  /// Places a call costing `cost`, submitted at `now` by `caller` (0: no caller, no catch-up), without
  /// sleeping (the timeline alone).
  Call place(Clock::duration cost, Clock::time_point now, std::uint64_t caller = 0);

  /// Calls placed so far.
  std::size_t calls() const;
  /// Its streams.
  int streams() const noexcept { return static_cast<int>(free_at_.size()); }

 private:
  mutable std::mutex mutex_;
  std::vector<Clock::time_point> free_at_;
  Clock::duration catch_up_;
  std::unordered_map<std::uint64_t, Clock::time_point> last_end_;  ///< By caller.
  std::size_t calls_ = 0;
};

}  // namespace refenc::profile
