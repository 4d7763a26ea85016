// The stopping rule: whether a model/phase/concurrency runs another repeat. Below the manifest's
// `repeats` always; at or past `stopping.max_repeats` never; in between (cold phase, a model the gate
// judges) only while either gate interval at that concurrency (p95 E2E reduction, throughput gain,
// from the cells so far) is wider than `stopping.target_width`. A stop is recorded with its reason.
//
//   std::vector<StopRecord> stops;
//   for (int rep = 0; keep_repeating(run, manifest, "fish-s2-pro", Phase::cold, 8, rep, stops); ++rep) run_repeat(rep);
#pragma once

#include <string>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"

namespace refenc::profile {

/// True when the group should run repeat number `done` (0-based) next; when false, appends why it
/// stopped to `stops`.
bool keep_repeating(const RunRecord& run, const Manifest& manifest, const std::string& model, Phase phase,
                    int concurrency, int done, std::vector<StopRecord>& stops);

}  // namespace refenc::profile
