// Gate: the M4b go/no-go decision per model, from a run's cold-cache cells and their raw requests.
//
// Per model, in order:
//   1. eligibility: a model whose encoder batches internally (not migrated) or has no safe batch
//      primitive is NOT_APPLICABLE, with that reason;
//   2. arms: the cold phase needs both m4a and m4b with requests at every concurrency level the
//      manifest profiles (and any other level a cold cell shows), else MISSING_ARM naming the
//      missing cells;
//   3. at each concurrency (requests pooled over repeats):
//      (a) reference encode must be the largest stage of cold M4a E2E (shares of mean E2E:
//          preprocessing, encode, synthesis; queueing is reported apart) -- else NO-GO;
//      (b) M4b vs M4a: p95 E2E reduction r = 1 - p95(m4b) / p95(m4a), throughput gain
//          g = tput(m4b) / tput(m4a) - 1, each with a seeded percentile-bootstrap interval
//          (stats/throughput.hpp for g). GO when lo(r) >= latency threshold or lo(g) >= throughput
//          threshold and some M4b batch held more than one request (else INCONCLUSIVE: the gain is
//          not batching); INCONCLUSIVE when only a point estimate clears its threshold; NO-GO otherwise.
//   The model's verdict is the worst over concurrencies (NO-GO < INCONCLUSIVE < GO);
//   3b. capacity: when the manifest sweeps arrival rates, M4b's capacity at the SLO against M4a's
//      (verdict/capacity_gate.hpp); the better of it and the levels' verdict is the model's;
//   3c. contamination: a model with a cold cell that stayed contaminated (verdict/contamination_rule.hpp) is
//      INCONCLUSIVE, naming the cells and why (a busy machine decides nothing), unless parity fails;
//   4. parity: every M4b cell (any phase) whose batches encoded requests must carry a parity check, and
//      every checked batched artifact must equal the single encode of the same request (integers
//      exactly, floats within the model's encoder.parity_tolerance): a mismatch or a failed check is
//      NO-GO; batched requests with no check at all cap the verdict at INCONCLUSIVE.
// Every verdict carries the evidence grade ("proxy scale tiny" or "real module ...").
//
// Exit codes (labels.hpp): 0 every model GO or NOT_APPLICABLE; 10 some NO-GO; 11 some INCONCLUSIVE;
// 12 some MISSING_ARM (the highest applies).
//
//   RunRecord run = load_run_with_requests("runs/x");
//   GateReport g = evaluate_gate(run, run.gate_options());
//   std::cout << format_gate(g);   // render/text_report.hpp; exit with g.exit_code
#pragma once

#include "profile/record/gate_report.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Evaluates the gate over `run`'s models, cells, manifest levels and raw requests, with each
/// verdict's stability (verdict_stability.hpp).
GateReport evaluate_gate(const RunRecord& run, const GateOptions& options);

/// The gate without verdict stability (what the stability and the stopping rule evaluate on parts of a run).
GateReport evaluate_gate_levels(const RunRecord& run, const GateOptions& options);

}  // namespace refenc::profile
