// The shared tier's breakdown in text, for the terminal summary and summary.md: per warm-shared cell,
// where replica B's requests were served from (requests.jsonl outcomes) and the shared-tier counters
// (report.json `cache`), so the hit% of the table can be read apart.
//
//   std::string lines = shared_tier_lines(run);   // "" when the run has no warm-shared cell
//   double ratio = shared_hit_share(run.cells[0]);  // shared_hit outcomes / requests
#pragma once

#include <string>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// Requests a cell counts as hits: outcomes hit (memory), disk_hit, shared_hit and merged.
double hit_requests(const Cell& cell);

/// shared_hit outcomes / requests of a cell (0 when it sent none).
double shared_hit_share(const Cell& cell);

/// A heading and one line per warm-shared cell: requests from shared, memory, disk, encoded and merged,
/// and the shared tier's hits, misses, errors, lease waits and lease takeovers; "" when there is none.
std::string shared_tier_lines(const RunRecord& run);

}  // namespace refenc::profile
