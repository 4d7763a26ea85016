// A synthetic model on a modelled device (device_queue.hpp): a batch of n references costs
// fixed_ms + per_item_ms * n on one device stream, a single encode is a batch of one, preprocessing is
// free, and every artifact is a string of artifact_bytes. Its capacity is known analytically -- full
// batches of b serve b / (fixed_ms + per_item_ms * b) requests per millisecond -- which is what the
// capacity sweep is checked against (bench_batching --capacity).
//
//   SyntheticDeviceCost cost{.fixed_ms = 20, .per_item_ms = 2};
//   BackendFactory factory = synthetic_device_factory(cost);
//   ProfileResult r = run_profile(load_manifest("workloads/capacity-synthetic.json"), factory, {.out_dir = "runs/x"});
//   double knee = synthetic_knee_rps(cost, /*batch=*/8);   // 222.2 req/s
#pragma once

#include <cstddef>

#include "profile/orchestration/model_backend.hpp"

namespace refenc::profile {

struct SyntheticDeviceCost {
  double fixed_ms = 20;    ///< Per device call.
  double per_item_ms = 2;  ///< Per reference in the call.
  int streams = 1;         ///< Device streams (calls at once).
  std::size_t artifact_bytes = 4096;
};

/// The saturation throughput (req/s) of full batches of `batch` on `cost`'s device.
double synthetic_knee_rps(const SyntheticDeviceCost& cost, int batch);

/// A backend factory whose every model is the synthetic device model (batching eligible), named as the
/// manifest names it, graded "synthetic device (modelled: F ms + P ms/item)".
BackendFactory synthetic_device_factory(const SyntheticDeviceCost& cost);

}  // namespace refenc::profile
