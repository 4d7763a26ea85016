// Capacity under an SLO, from the requests of the rate sweeps: each step's figures, each sweep's
// capacity with its interval, and the gate's capacity criterion for M4b.
//
// The capacity criterion (per model, when the run swept both arms): gain g = capacity(m4b) /
// capacity(m4a) - 1 at the SLO on p95 TTFA, with its bootstrap interval (stats/capacity.hpp).
//   GO            lo(g) >= gate.throughput_gain and some M4b batch of the sweep held more than one request;
//   INCONCLUSIVE  a GO without such a batch (the gain is not batching), or only the point clears the
//                 threshold, or M4a met the SLO at no swept rate or at every one (capacity unknown or
//                 only a lower bound: sweep wider);
//   MISSING_ARM   an arm's sweep is absent or sent no request;
//   NO-GO         otherwise.
// How it combines with the closed-loop criteria of gate.hpp: the model's verdict from its cold levels
// (worst over levels) and the capacity criterion's are combined by taking the better of the two (GO >
// INCONCLUSIVE > NO-GO; MISSING_ARM from either is kept), since either is a way for M4b to pay off;
// with no cold levels the capacity criterion decides alone. Parity is applied after, as before: a
// parity failure is NO-GO whatever the capacity.
//
//   std::vector<SweepStep> steps = sweep_steps(run, run.capacity->sweeps[0]);
//   std::optional<CapacityResult> c = judge_capacity(run, "fish-s2-pro", run.gate_options());
//   Verdict v = combine_capacity(Verdict::no_go, /*have_levels=*/true, *c);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/stats/capacity.hpp"

namespace refenc::profile {

/// TTFA samples of one step's requests: successful ones' TTFA, infinity for a failed one.
std::vector<double> step_ttfa_samples(const std::vector<RequestRecord>& records);

/// The steps of `sweep` with their requests from `run.requests` (rate and TTFA samples).
std::vector<SweepStep> sweep_steps(const RunRecord& run, const CapacitySweep& sweep);

/// A step's figures from its requests (see capacity_record.hpp for each definition); `bootstrap`
/// gives its p95 TTFA interval.
RateStep summarize_step(int index, double rate_per_s, const std::vector<RequestRecord>& records, const SloSpec& slo,
                        const BootstrapOptions& bootstrap);

/// Sets `sweep.capacity_rps` and `sweep.censored` from its steps' requests in `run`.
void finish_sweep(CapacitySweep& sweep, const RunRecord& run, double slo_ttfa_ms, const GateOptions& options);

/// The bootstrap options of an estimate named `name` (a step or sweep id): the gate's resamples and
/// confidence, the run's seed mixed with the name's hash.
BootstrapOptions capacity_bootstrap(const GateOptions& options, const std::string& name);

/// The capacity criterion for `model`; none when the run swept no rates.
std::optional<CapacityResult> judge_capacity(const RunRecord& run, const std::string& model,
                                             const GateOptions& options);

/// The model's verdict from its closed-loop verdict and the capacity criterion (rule above).
Verdict combine_capacity(Verdict closed_loop, bool have_levels, const CapacityResult& capacity);

}  // namespace refenc::profile
