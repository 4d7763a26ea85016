#include "profile/verdict/verdict_stability.hpp"

#include <algorithm>
#include <random>
#include <set>

#include "profile/record/cell_groups.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/verdict/gate.hpp"

namespace refenc::profile {
namespace {

/// Share of the level's bootstrap replicates in which a statistic clears its threshold. The seed and
/// the draw order are the gate's (gate.cpp, bootstrap_pair and throughput_change: for each replicate
/// arm A's requests are drawn, then arm B's, from one mt19937_64).
double go_share(const std::string& model, const LevelResult& l, const CellGroup& a, const CellGroup& b,
                const GateOptions& options) {
  const GateSpec& spec = options.spec;
  std::vector<double> ea = a.samples(Stage::e2e), eb = b.samples(Stage::e2e);
  if (ea.empty() || eb.empty() || spec.bootstrap_resamples < 1) return -1;
  ThroughputPool pa = a.throughput_pool(), pb = b.throughput_pool();
  const double ta = pa.throughput(), tb = pb.throughput(), ma = mean(ea), mb = mean(eb);
  std::mt19937_64 rng(options.seed ^ stable_hash(model) ^
                      (static_cast<std::uint64_t>(l.concurrency) * 0x9E3779B97F4A7C15ULL));
  std::vector<double> ra, rb;
  int go = 0;
  for (int i = 0; i < spec.bootstrap_resamples; ++i) {
    resample_into(ea, rng, ra);
    resample_into(eb, rng, rb);
    double red = 1.0 - percentile(rb, 95) / percentile(ra, 95);
    double gain = (tb * mb / mean(rb)) / (ta * ma / mean(ra)) - 1.0;
    if (red >= spec.latency_reduction || gain >= spec.throughput_gain) ++go;
  }
  return static_cast<double>(go) / spec.bootstrap_resamples;
}

/// `run` restricted to the cells (and requests) of one repeat, judged at the cold levels that ran it
/// (the stopping rule can give levels different numbers of repeats).
RunRecord one_repeat(const RunRecord& run, int repeat) {
  RunRecord part;
  part.manifest = run.manifest;
  part.manifest.levels[Phase::cold].clear();
  part.context = run.context;
  part.models = run.models;
  part.have_requests = run.have_requests;
  for (const Cell& c : run.cells)
    if (c.key.repeat == repeat) {
      part.cells.push_back(c);
      auto& levels = part.manifest.levels[Phase::cold];
      if (c.key.phase == Phase::cold && std::find(levels.begin(), levels.end(), c.key.concurrency) == levels.end())
        levels.push_back(c.key.concurrency);
      part.requests[c.key.id()] = run.requests_of(c.key);
    }
  return part;
}

}  // namespace

void add_verdict_stability(const RunRecord& run, GateReport& gate) {
  auto groups = group_cells(run);
  std::set<int> repeats;
  for (const Cell& c : run.cells)
    if (c.key.phase == Phase::cold) repeats.insert(c.key.repeat);
  std::vector<GateReport> per_repeat;
  for (int r : repeats) per_repeat.push_back(evaluate_gate_levels(one_repeat(run, r), gate.options));
  for (ModelVerdict& m : gate.models) {
    if (m.levels.empty()) continue;
    VerdictStability s;
    for (LevelResult& l : m.levels) {
      auto a = groups.find(GroupKey{m.model, Arm::m4a, Phase::cold, l.concurrency});
      auto b = groups.find(GroupKey{m.model, Arm::m4b, Phase::cold, l.concurrency});
      if (a == groups.end() || b == groups.end()) continue;
      l.bootstrap_go_share = go_share(m.model, l, a->second, b->second, gate.options);
      if (l.bootstrap_go_share < 0) continue;
      double agree = -1;
      if (l.outcome == Verdict::no_go && l.top_stage != Stage::encode)
        agree = 1;
      else if (l.outcome == Verdict::go)
        agree = l.bootstrap_go_share;
      else if (l.outcome == Verdict::no_go)
        agree = 1 - l.bootstrap_go_share;
      if (agree >= 0)
        s.bootstrap_agreement = s.bootstrap_agreement < 0 ? agree : std::min(s.bootstrap_agreement, agree);
    }
    for (const GateReport& g : per_repeat)
      for (const ModelVerdict& v : g.models)
        if (v.model == m.model) {
          s.repeat_verdicts.push_back(v.verdict);
          ++s.repeats;
          if (v.verdict == m.verdict) ++s.repeats_agreeing;
        }
    m.stability = s;
  }
}

}  // namespace refenc::profile
