// Plain-text view of each cell's memory-tier reuse for summary.md: the measured hit ratio beside the
// hit ratio the LRU miss-ratio curve of the cell's own request trace predicts at its memory bound, and
// the difference in points. Empty when no cell carries a reuse block.
//
//   std::string md = reuse_table(run);   // summary_markdown includes it
#pragma once

#include <string>

#include "profile/record/run_record.hpp"

namespace refenc::profile {

/// A markdown table, one row per cell with reuse; "" when none.
std::string reuse_table(const RunRecord& run);

}  // namespace refenc::profile
