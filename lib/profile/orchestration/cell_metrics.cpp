#include "profile/orchestration/cell_metrics.hpp"

#include <algorithm>
#include <map>

#include "profile/stats/miss_ratio_curve.hpp"
#include "profile/stats/percentile.hpp"

namespace refenc::profile {

std::uint64_t encodes_performed(const ServiceStats& delta) {
  const std::uint64_t tier_hits = delta.tier.disk_hits + delta.tier.shared_hits;
  std::uint64_t from_memory_misses = delta.misses > tier_hits ? delta.misses - tier_hits : 0;
  return from_memory_misses + delta.uncacheable;
}

Cell make_cell(const CellKey& key, const RunResult& run, const ServiceStats& delta, const TelemetrySummary& telemetry,
               bool open_loop, bool batching_active) {
  Cell c;
  c.key = key;
  c.open_loop = open_loop;
  c.batching_active = batching_active;
  std::size_t ok = 0;
  double audio = 0;
  for (const auto& r : run.records) {
    if (r.ok()) {
      ++ok;
      audio += r.audio_seconds;
    }
    ++c.outcomes[r.outcome];
  }
  for (Stage s : reported_stages()) c.stages[s] = summarize(stage_samples(run.records, s));
  for (const auto& [name, value] : delta.fields()) c.cache[name] = value;
  c.batch_size_histogram.assign(delta.batch_sizes.begin(), delta.batch_sizes.end());
  if (ok < 100)
    c.warnings.push_back("tail percentiles (p90/p95/p99) rest on " + std::to_string(ok) +
                         " samples (< 100): read them as rough");
  if (run.generator_behind)
    c.warnings.push_back("load generator fell behind its schedule: " + std::to_string(run.late) +
                         " requests started late (max lag " + std::to_string(run.max_lag_s) + " s)");
  if (run.records.size() != ok) c.warnings.push_back(std::to_string(run.records.size() - ok) + " requests failed");
  if (run.interrupted) c.warnings.push_back("cell interrupted before all requests were sent");
  c.count = run.records.size();
  c.errors = run.records.size() - ok;
  c.wall_s = run.wall_s;
  c.throughput_rps = run.wall_s > 0 ? static_cast<double>(ok) / run.wall_s : 0.0;
  c.audio_seconds_per_s = run.wall_s > 0 ? audio / run.wall_s : 0.0;
  c.generator = {run.generator_behind, run.late, run.max_lag_s};
  c.telemetry = telemetry;
  GpuSummary& gpu = c.telemetry.gpu;
  gpu.encodes = encodes_performed(delta);
  gpu.energy_per_encode_j = !gpu.energy_method.empty() && gpu.encodes > 0 ? gpu.energy_j / gpu.encodes : 0.0;
  c.interrupted = run.interrupted;
  return c;
}

ParitySummary record_parity(const std::vector<ParityCheck>& checks, std::vector<RequestRecord>& records,
                            double tolerance, std::size_t sample) {
  ParitySummary p;
  p.tolerance = tolerance;
  p.sample = sample;
  std::map<std::size_t, RequestRecord*> by_index;
  for (RequestRecord& r : records) {
    by_index[r.index] = &r;
    if (r.batch_size > 0 && r.ok()) ++p.batched;
  }
  for (const ParityCheck& c : checks) {
    auto it = by_index.find(c.index);
    if (it == by_index.end()) continue;  // a warmup request, outside the measured set
    RequestRecord& r = *it->second;
    ++p.checked;
    r.parity_mismatched_codes = c.parity.mismatched_codes;
    r.parity_max_abs_diff = c.parity.max_abs_diff;
    r.parity_error = c.error;
    p.mismatched_codes += c.parity.mismatched_codes;
    p.max_abs_diff = std::max(p.max_abs_diff, c.parity.max_abs_diff);
    if (!c.error.empty()) {
      r.parity = "error";
      ++p.errors;
    } else if (c.parity.identical) {
      r.parity = "identical";
      ++p.identical;
    } else if (c.parity.mismatched_codes == 0 && c.parity.max_abs_diff <= tolerance) {
      r.parity = "within_tolerance";
      ++p.within_tolerance;
    } else {
      r.parity = "mismatched";
      ++p.mismatched;
    }
  }
  return p;
}

void add_cache_reuse(Cell& cell, const std::vector<RequestRecord>& requests, const CacheSpec& cache,
                     std::size_t points) {
  std::vector<TraceAccess> trace;
  std::size_t hits = 0;
  for (const auto& r : requests) {
    if (!r.ok() || r.key.empty()) continue;
    trace.push_back({r.key, r.stored_bytes});
    if (r.outcome == "hit") ++hits;
  }
  if (trace.empty()) return;
  MissRatioCurve mrc = miss_ratio_curve(trace);
  CacheReuse reuse;
  reuse.requests = trace.size();
  reuse.hits = hits;
  reuse.distinct = mrc.distinct();
  reuse.working_set_bytes = mrc.working_set_bytes();
  reuse.max_bytes = cache.max_bytes;
  reuse.max_items = cache.max_items;
  reuse.predicted_hit_ratio = mrc.hit_ratio(cache.max_bytes, cache.max_items);
  reuse.points = mrc.points(points, cache.max_items);
  cell.reuse = std::move(reuse);
}

}  // namespace refenc::profile
