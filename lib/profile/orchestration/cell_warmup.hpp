// CellWarmup: what runs before a cell's timed window, so that the window measures a warmed process
// and a warmed service, as `refenc calibrate` measures its grid (every point warmed before it is timed):
//   1. priming, once per model and call shape: the largest encoder calls the cell can make, as many
//      at once as it makes them, outside its service (nothing cached or counted). M4b: its batch
//      workers, each with a batch of max_batch_size of the longest warm-up references; M4a: one single
//      call of the longest per worker. The first such calls fault in the memory they need (gigabytes
//      for batches of long references). Unprimed, the first cell of each shape paid for that inside
//      its timed window, and a comparison charged it to whichever arm met the shape first.
//   2. the cell's warm-up requests through its service (Manifest::warmup_requests).
// Without warm-up references (every reference is measured) neither runs.
//
//   CellWarmup warmup;   // one per model: its backend's process-wide memory is what priming warms
//   warmup.run(*service, warmup_items, largest_calls(arm, conc, threads), {.concurrency = conc}, frame_rate);
#pragma once

#include <set>
#include <span>
#include <vector>

#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/model_backend.hpp"
#include "profile/orchestration/runner.hpp"

namespace refenc::profile {

/// The largest encoder calls a cell makes: `calls` at once, each of `batch` references, on `threads`
/// intra-op threads (0: as configured).
struct CallShape {
  int batch = 1;
  int calls = 1;
  int threads = 0;
  auto operator<=>(const CallShape&) const = default;
};

/// `arm`'s largest calls at concurrency `conc`: M4b's batch workers (arm.batch_workers, resolved)
/// with max_batch_size references each; otherwise `conc` single calls.
CallShape largest_calls(const ArmSpec& arm, int conc, int threads);

class CellWarmup {
 public:
  /// Primes `service`'s encoder with `shape` the first time this object sees it (the `shape.batch`
  /// longest of `warmup`, ties in order), then sends `warmup` through the service with `options`
  /// (its concurrency capped at the number of items). Nothing runs when `warmup` is empty.
  void run(ServiceHandle& service, const std::vector<WorkItem>& warmup, CallShape shape, RunOptions options,
           double frame_rate);

  /// Shapes primed so far.
  const std::set<CallShape>& primed() const noexcept { return primed_; }

 private:
  std::set<CallShape> primed_;
};

}  // namespace refenc::profile
