// Plain-text views of a run for the terminal and summary.md: the per-cell table, the gate's verdicts
// and the comparison of two runs. Computing lives in verdict/; these only format the record.
//
//   std::cout << summary_table(run) << format_gate(*run.gate);
//   write_run(dir, run, summary_markdown(run));
//   std::cout << format_compare(compare_runs(base, cur, {}));
#pragma once

#include <string>

#include "profile/record/comparison.hpp"
#include "profile/record/gate_report.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// The per-cell table printed at the end of a profile (fixed-width text).
std::string summary_table(const RunRecord& run);

/// summary.md: context, stage kinds, the table, warnings and the gate.
std::string summary_markdown(const RunRecord& run);

/// The gate's verdicts per model and concurrency.
std::string format_gate(const GateReport& gate);

/// Every compared metric of every matched group, the unmatched groups and the count of regressions.
std::string format_compare(const CompareResult& result);

}  // namespace refenc::profile
