#include "profile/orchestration/stopping_rule.hpp"

#include "profile/verdict/gate.hpp"

namespace refenc::profile {
namespace {

/// The gate's level at `concurrency` over the cells so far of `model`'s cold phase at that level alone.
const LevelResult* level_so_far(const RunRecord& run, const std::string& model, int concurrency, GateReport& out) {
  RunRecord part;
  part.manifest = run.manifest;
  part.manifest.levels = {{Phase::cold, {concurrency}}};
  part.context = run.context;
  part.have_requests = true;
  for (const ModelEntry& m : run.models)
    if (m.name == model) part.models.push_back(m);
  for (const Cell& c : run.cells)
    if (c.key.model == model && c.key.phase == Phase::cold && c.key.concurrency == concurrency) {
      part.cells.push_back(c);
      part.requests[c.key.id()] = run.requests_of(c.key);
    }
  out = evaluate_gate_levels(part, run.gate_options());
  if (out.models.empty() || out.models[0].levels.empty()) return nullptr;
  return &out.models[0].levels[0];
}

}  // namespace

bool keep_repeating(const RunRecord& run, const Manifest& manifest, const std::string& model, Phase phase,
                    int concurrency, int done, std::vector<StopRecord>& stops) {
  if (done < manifest.repeats) return true;
  const StoppingSpec& rule = manifest.noise.stopping;
  StopRecord stop{model, phase, concurrency, done, "repeats"};
  const bool has_rule = rule.max_repeats > manifest.repeats && rule.target_width > 0;
  GateReport gate;
  const LevelResult* level = has_rule && phase == Phase::cold ? level_so_far(run, model, concurrency, gate) : nullptr;
  if (level) {
    stop.p95_width = level->p95_e2e_reduction.hi - level->p95_e2e_reduction.lo;
    stop.throughput_width = level->throughput_gain.hi - level->throughput_gain.lo;
    if (stop.p95_width <= rule.target_width && stop.throughput_width <= rule.target_width) {
      stop.reason = "intervals within target";
    } else if (done >= rule.max_repeats) {
      stop.reason = "max_repeats";
    } else {
      return true;
    }
  } else if (has_rule && phase == Phase::cold) {
    stop.reason = "no gate level";
  }
  stops.push_back(std::move(stop));
  return false;
}

}  // namespace refenc::profile
