// Capacity sweep: for one model, each arm's open-loop rate sweep over the cold phase's references --
// a fresh service per step (empty tiers), the cell's warmup, then the phase's requests arriving at the
// step's rate (Poisson, or evenly spaced) and served by `capacity.concurrency` workers. Rates are the
// manifest's list (ascending, arms interleaved per rate) or, with "auto", each arm's own search
// (stats/capacity.hpp), the arms taking turns step by step. Each request is recorded with its rate step
// and rate; each step's figures and each sweep's capacity come from those requests
// (verdict/capacity_gate.hpp). At the same rate both arms get the same arrival schedule (its seed is
// the manifest's seed plus the rate in milli-requests per second).
//
//   SweepInputs in{manifest, spec, *backend, arms, refs, cores};
//   run_capacity_sweeps(in, run);   // appends run.capacity->sweeps and their requests
#pragma once

#include <atomic>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/orchestration/cell_warmup.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/model_backend.hpp"
#include "profile/manifest/reference_set.hpp"

namespace refenc::profile {

/// What one model's sweeps need from the profiler.
struct SweepInputs {
  const Manifest& manifest;
  const ModelSpec& spec;
  ModelBackend& backend;
  const std::vector<ArmSpec>& arms;  ///< The arms the model runs (m4b only when eligible).
  const std::vector<ReferenceItem>& refs;
  unsigned cores = 1;
  const std::atomic<bool>* stop = nullptr;
  bool sleep_synthesis = true;
  CellWarmup* warmup = nullptr;  ///< The model's warm-up (call shapes it primed); null: a fresh one.
};

/// Runs the sweeps of `in.spec`'s model (manifest.capacity must be set) and appends them, with their
/// requests, to `run.capacity` (created with the manifest's SLO when absent).
void run_capacity_sweeps(const SweepInputs& in, RunRecord& run);

}  // namespace refenc::profile
