// Cell metrics: the figures of one finished cell (model x arm x phase x concurrency x repeat) as the
// typed record holds them.
//
// Latency stages are summarised over the successful requests (nearest-rank percentiles, seconds);
// failures are counted in `errors`. Throughput is successful requests (and modelled audio seconds)
// per second of wall time from the first scheduled send to the last completion. The GPU energy of
// the cell is shared over the encodes it performed (encodes_performed) as energy per encode.
//
//   Cell cell = make_cell({"fish-s2-pro", Arm::m4a, Phase::cold, 8, 0}, run, after.minus(before), telemetry,
//                         /*open_loop=*/false, /*batching_active=*/false);
//   double p95 = cell.stage(Stage::e2e).p95;
//   cell.parity = record_parity(handle->check_parity(), run.records, /*tolerance=*/0, /*sample=*/0);
//   add_cache_reuse(cell, run.records, CacheSpec{});   // cell.reuse: hit ratio and the miss-ratio curve
#pragma once

#include "core/service_stats.hpp"
#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/runner.hpp"

namespace refenc::profile {

/// References encoded, by a cell's counter deltas (an M4b batch of four counts four): leaders that
/// missed memory and were not answered by the disk or the shared tier (misses - disk_hits -
/// shared_hits, failed encodes included: they cost the device too) plus uncacheable requests, which
/// always encode. Recomputable from the cell's "cache" block of report.json.
std::uint64_t encodes_performed(const ServiceStats& delta);

/// The record of a finished cell (schema: reports/report.schema.json, "cells" items).
Cell make_cell(const CellKey& key, const RunResult& run, const ServiceStats& delta, const TelemetrySummary& telemetry,
               bool open_loop, bool batching_active);

/// Writes each parity check onto its request (by WorkItem index) in `records`, judged against
/// `tolerance` (the largest float difference allowed), and summarises them; `sample` is the most
/// checks the cell asked for (0 = all), recorded as such.
ParitySummary record_parity(const std::vector<ParityCheck>& checks, std::vector<RequestRecord>& records,
                            double tolerance, std::size_t sample);

/// Sets `cell.reuse` from the cell's requests (in send order) and its memory-tier bounds: the measured
/// hit ratio and the miss-ratio curve of the same trace at `points` byte bounds. Leaves it unset when
/// no request carries a cache key.
void add_cache_reuse(Cell& cell, const std::vector<RequestRecord>& requests, const CacheSpec& cache,
                     std::size_t points = 16);

}  // namespace refenc::profile
