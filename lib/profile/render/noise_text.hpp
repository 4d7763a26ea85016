// Plain-text views of the noise side of a run, for the terminal, summary.md and compare: a verdict's
// stability and contamination, the A/A spread, each cell's host load, where repeats stopped, and the
// run counts and noise floors of a comparison.
//
//   for (const std::string& line : verdict_noise_lines(run.gate->models[0])) std::cout << "      " << line << '\n';
//   std::string md = noise_markdown(run);        // "" for a run without noise settings
//   std::cout << compare_runs_line(comparison);  // "runs: baseline 1 (runs/a), current 1 (runs/b); ..."
#pragma once

#include <string>
#include <vector>

#include "profile/record/comparison.hpp"
#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// A model verdict's stability ("stability: ...") and contamination lines (none when neither is known).
std::vector<std::string> verdict_noise_lines(const ModelVerdict& verdict);

/// summary.md's noise section: A/A spread per group and metric, contaminated and re-run cells with
/// their host load, and where repeats stopped.
std::string noise_markdown(const RunRecord& run);

/// How many runs each side of a comparison had, and how the noise floor and U test were applied.
std::string compare_runs_line(const CompareResult& result);

}  // namespace refenc::profile
