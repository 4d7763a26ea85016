// Pooling a run's repeats: the cells of one model/arm/phase/concurrency and their raw requests, in
// report order, as the gate, compare and the HTML page all pool them.
//
//   for (const auto& [key, g] : group_cells(run)) {
//     std::vector<double> e2e = g.samples(Stage::e2e);  // successful requests' E2E, repeats pooled
//     ThroughputPool pool = g.throughput_pool();        // for throughput_interval / throughput_change
//   }
#pragma once

#include <map>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/stats/throughput.hpp"

namespace refenc::profile {

/// The cells of one model/arm/phase/concurrency and their requests.
struct CellGroup {
  GroupKey key;
  std::vector<const Cell*> cells;              ///< In report order.
  std::vector<const RequestRecord*> requests;  ///< The cells' raw requests, cell by cell.

  /// Successful requests.
  std::size_t ok() const;
  /// Summed wall time of the cells.
  double wall_s() const;
  /// Samples of `stage` over the successful requests.
  std::vector<double> samples(Stage stage) const;
  /// E2E samples, successful requests and wall time.
  ThroughputPool throughput_pool() const;
};

/// The run's cells grouped over repeats (requests from `run.requests`).
std::map<GroupKey, CellGroup> group_cells(const RunRecord& run);

}  // namespace refenc::profile
