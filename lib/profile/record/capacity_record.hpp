// Capacity under an SLO as a run record holds it: the SLO the manifest states, each arm's open-loop
// rate sweep (one step per arrival rate, its requests in requests.jsonl under the step's id with
// `rate_step` and `rate_per_s`), the capacity found, and the gate's capacity criterion per model.
//
// Every figure is recomputable from requests.jsonl and the SLO: a step's p95 TTFA is the nearest-rank
// p95 over its sent requests (failed ones count as infinitely slow), its goodput the share of sent
// requests with TTFA <= slo.ttfa_ms and E2E <= slo.e2e_ms, its throughput the successful requests over
// the span from the first scheduled send to the last scheduled send + E2E.
//
//   const CapacityReport& cap = *run.capacity;
//   for (const CapacitySweep& s : cap.sweeps)
//     std::cout << s.id() << ": " << s.capacity_rps.point << " req/s at p95 TTFA <= " << cap.slo.ttfa_ms << " ms\n";
//   const auto& first = run.requests.at(cap.sweeps[0].step_id(0));   // run_record.hpp: its requests
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profile/record/labels.hpp"
#include "profile/stats/bootstrap.hpp"

namespace refenc::profile {

/// Service-level objectives on each request: TTFA and E2E in milliseconds. The capacity search bounds
/// the p95 of TTFA by ttfa_ms; goodput counts requests within both.
struct SloSpec {
  double ttfa_ms = 0;
  double e2e_ms = 0;
};

/// One arrival rate of a sweep.
struct RateStep {
  int index = 0;              ///< Order in which the sweep ran it, from 0 (requests' rate_step).
  double rate_per_s = 0;      ///< Offered arrival rate.
  std::size_t requests = 0;   ///< Requests sent.
  std::size_t errors = 0;     ///< Of which failed.
  std::size_t good = 0;       ///< Of which within both SLOs.
  double goodput = 0;         ///< good / requests.
  double goodput_rps = 0;     ///< good / span_s.
  double throughput_rps = 0;  ///< Successful requests / span_s.
  double span_s = 0;          ///< First scheduled send to the last (scheduled send + E2E).
  Interval p95_ttfa_s;        ///< Nearest-rank p95 of TTFA with its bootstrap interval (infinity: > 5% failed).
  double p95_e2e_s = 0;       ///< Over successful requests.
  double p50_ttfa_s = 0;      ///< Over successful requests.
  bool meets_slo = false;     ///< p95_ttfa_s.point <= slo.ttfa_ms.
  std::uint64_t batches = 0, batched_items = 0;  ///< The service's batch counters over the step (M4b).
  bool generator_behind = false;                 ///< The open-loop generator missed its schedule.
};

/// One arm's sweep for one model (cold phase: a fresh service per step).
struct CapacitySweep {
  std::string model;
  Arm arm = Arm::m4a;
  int concurrency = 0;          ///< Workers that serve the open-loop arrivals.
  std::vector<RateStep> steps;  ///< In the order run.
  Interval capacity_rps;        ///< Highest rate meeting the SLO below the lowest that does not.
  bool censored = false;        ///< No step missed the SLO: capacity_rps is only a lower bound.

  std::string id() const;                ///< "model/arm/capacity/c16"
  std::string step_id(int index) const;  ///< "model/arm/capacity/c16/step3": the requests' cell field.
};

/// The run's sweeps and what they were run with.
struct CapacityReport {
  SloSpec slo;
  std::string arrivals = "poisson";  ///< "poisson" or "uniform" (evenly spaced).
  std::string rates = "auto";        ///< "auto" (the search) or "list".
  std::vector<CapacitySweep> sweeps;
};

/// The gate's capacity criterion for one model: M4b's capacity at the SLO against M4a's.
struct CapacityResult {
  double slo_ttfa_ms = 0;
  Interval m4a_rps, m4b_rps;  ///< Capacities with their intervals.
  Interval gain;              ///< capacity(m4b) / capacity(m4a) - 1.
  bool m4a_censored = false, m4b_censored = false;
  Verdict outcome = Verdict::no_go;
  std::string reason;
};

}  // namespace refenc::profile
