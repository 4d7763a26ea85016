// Runner: sends a cell's requests to one service, closed loop (N workers, each sends when its previous
// request is done) or open loop (Poisson arrivals at a seeded schedule, or given arrival times, served
// by N workers).
//
// Latency counts from the scheduled send time, so a request that waited for a free worker carries that
// wait (no coordinated omission); a start more than max(5 ms, half the mean interarrival) after its
// schedule marks the generator as behind. Stages come from the service's RequestTrace:
// preprocessing = (normalized - start) + (keyed - normalized), reference encode = end - keyed (waits on
// a merge or a batch included); synthesis is modelled (SynthesisModel). TTFA = queue + preprocessing +
// encode + modelled first audio; E2E = queue + preprocessing + encode + modelled end. A request that
// throws is recorded as failed and the run goes on.
//
//   RunOptions o{.concurrency = 8};
//   RunResult r = run_requests(*handle, items, o, &synth, frame_rate);
//   bool late = r.generator_behind;  double e2e = r.records[0].e2e_s;
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "profile/record/request_record.hpp"
#include "profile/orchestration/model_backend.hpp"
#include "profile/device/synthesis_model.hpp"

namespace refenc::profile {

struct RunOptions {
  int concurrency = 1;
  bool open_loop = false;
  double rate_per_s = 0;                    ///< Open loop only.
  std::vector<double> arrivals_s;           ///< Open loop: the schedule, seconds from the start (one per item), in
                                            ///< place of Poisson arrivals at rate_per_s (a replayed trace).
  std::uint64_t seed = 1;                   ///< Seeds the open-loop schedule.
  const std::atomic<bool>* stop = nullptr;  ///< When it turns true, no further request is sent.
  std::function<void(std::size_t done)> on_done;  ///< Called after each request (any thread).
};

struct RunResult {
  std::vector<RequestRecord> records;  ///< In send order; only requests actually sent.
  double wall_s = 0;                   ///< First scheduled send to last completion.
  bool generator_behind = false;
  double max_lag_s = 0;  ///< Largest (start - scheduled).
  std::size_t late = 0;  ///< Requests started beyond the tolerance.
  bool interrupted = false;
};

/// Runs `items` through `service`. `synth` may be null (no synthesis: TTFA = E2E = service time).
/// `frame_rate` converts reference seconds to code frames for the prefill model.
RunResult run_requests(ServiceHandle& service, const std::vector<WorkItem>& items, const RunOptions& options,
                       SynthesisModel* synth, double frame_rate);

}  // namespace refenc::profile
