// Verdict stability: how much a model's gate verdict would move with the data. Two measures:
//   - bootstrap: at each concurrency level, the share of the gate's own bootstrap replicates (the same
//     seeded resamples its intervals use) in which p95 reduction or throughput gain clears its
//     threshold (`bootstrap_go_share`); a level's agreement is that share for GO, one minus it for
//     NO-GO (1 when the level is NO-GO because encode is not the top stage); the model's is the
//     smallest over levels with a decisive outcome;
//   - repeats: the gate evaluated on each repeat's cells alone, and how many of those verdicts equal
//     the model's.
//
//   GateReport g = evaluate_gate_levels(run, run.gate_options());
//   add_verdict_stability(run, g);
//   double agree = g.models[0].stability->bootstrap_agreement;  // e.g. 0.99
#pragma once

#include "profile/record/gate_report.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Fills each judged model's `stability` and its levels' `bootstrap_go_share` in `gate` (evaluated on `run`).
void add_verdict_stability(const RunRecord& run, GateReport& gate);

}  // namespace refenc::profile
