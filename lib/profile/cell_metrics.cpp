#include "profile/cell_metrics.hpp"

#include "core/error.hpp"
#include "profile/percentile.hpp"

namespace refenc::profile {

std::string CellKey::id() const {
  return model + "/" + arm + "/" + phase + "/c" + std::to_string(concurrency) + "/r" + std::to_string(repeat);
}

const std::vector<std::pair<std::string, std::string>>& stage_kinds() {
  static const std::vector<std::pair<std::string, std::string>> kinds{
      {"preprocessing", "measured"},          {"encode", "measured"},
      {"synthesis_first_audio", "modelled"},  {"synthesis_end", "modelled"},
      {"ttfa", "measured+modelled"},          {"e2e", "measured+modelled"}};
  return kinds;
}

std::vector<double> stage_samples(const std::vector<RequestRecord>& records, const std::string& stage) {
  std::vector<double> v;
  v.reserve(records.size());
  for (const auto& r : records) {
    if (!r.ok()) continue;
    if (stage == "preprocessing") v.push_back(r.preprocessing_s);
    else if (stage == "encode") v.push_back(r.encode_s);
    else if (stage == "synthesis_first_audio") v.push_back(r.synthesis_first_s);
    else if (stage == "synthesis_end") v.push_back(r.synthesis_end_s);
    else if (stage == "ttfa") v.push_back(r.ttfa_s);
    else if (stage == "e2e") v.push_back(r.e2e_s);
    else if (stage == "queue") v.push_back(r.queue_s);
    else throw Error(ErrorKind::config, "unknown stage '" + stage + "'");
  }
  return v;
}

nlohmann::json cell_json(const CellKey& key, const RunResult& run, const ServiceStats& delta,
                         const TelemetrySummary& telemetry, bool open_loop, bool batching_active) {
  using nlohmann::json;
  std::size_t ok = 0;
  double audio = 0;
  json outcomes = json::object();
  for (const auto& r : run.records) {
    if (r.ok()) {
      ++ok;
      audio += r.audio_seconds;
    }
    outcomes[r.outcome] = outcomes.value(r.outcome, 0) + 1;
  }
  json stages = json::object();
  for (const auto& [name, kind] : stage_kinds()) {
    Summary s = summarize(stage_samples(run.records, name));
    stages[name] = {{"kind", kind}, {"count", s.count}, {"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90},
                    {"p95", s.p95}, {"p99", s.p99}, {"max", s.max}};
  }
  json cache = json::object();
  for (const auto& [name, value] : delta.fields()) cache[name] = value;
  json hist = json::array();
  for (auto c : delta.batch_sizes) hist.push_back(c);
  json warnings = json::array();
  if (ok < 100)
    warnings.push_back("tail percentiles (p90/p95/p99) rest on " + std::to_string(ok) +
                       " samples (< 100): read them as rough");
  if (run.generator_behind)
    warnings.push_back("load generator fell behind its schedule: " + std::to_string(run.late) +
                       " requests started late (max lag " + std::to_string(run.max_lag_s) + " s)");
  if (run.records.size() != ok)
    warnings.push_back(std::to_string(run.records.size() - ok) + " requests failed");
  if (run.interrupted) warnings.push_back("cell interrupted before all requests were sent");
  double wall = run.wall_s;
  return json{{"id", key.id()},
              {"model", key.model},
              {"arm", key.arm},
              {"phase", key.phase},
              {"concurrency", key.concurrency},
              {"repeat", key.repeat},
              {"arrivals", open_loop ? "open" : "closed"},
              {"batching_active", batching_active},
              {"count", run.records.size()},
              {"errors", run.records.size() - ok},
              {"outcomes", outcomes},
              {"wall_s", wall},
              {"throughput_rps", wall > 0 ? static_cast<double>(ok) / wall : 0.0},
              {"audio_seconds_per_s", wall > 0 ? audio / wall : 0.0},
              {"stages", stages},
              {"cache", cache},
              {"batch_size_histogram", hist},
              {"generator", {{"behind", run.generator_behind}, {"late", run.late}, {"max_lag_s", run.max_lag_s}}},
              {"telemetry", telemetry.to_json()},
              {"interrupted", run.interrupted},
              {"warnings", warnings}};
}

}  // namespace refenc::profile
