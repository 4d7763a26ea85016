// Plain-text view of a run's capacity sweeps, for the terminal and summary.md: one row per rate step
// (offered rate, achieved throughput, goodput, p95 TTFA with its interval, p95 E2E, whether it meets the
// SLO) and each arm's capacity at the SLO with its interval. Empty when the run swept no rates.
//
//   std::cout << summary_table(run) << capacity_table(run);   // text_report.hpp prints both
#pragma once

#include <string>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// The sweeps' steps and capacities (fixed-width text); "" without sweeps.
std::string capacity_table(const RunRecord& run);

}  // namespace refenc::profile
