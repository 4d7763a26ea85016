#include "profile/verdict/gate.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "profile/record/cell_groups.hpp"
#include "profile/verdict/capacity_gate.hpp"
#include "profile/verdict/contamination_rule.hpp"
#include "profile/verdict/verdict_stability.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/stats/throughput.hpp"

namespace refenc::profile {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

/// The cold concurrency levels the gate must see for `model`: the manifest's, and any level a cold cell
/// of the model shows.
std::set<int> cold_levels(const RunRecord& run, const std::string& model) {
  std::set<int> levels;
  if (auto it = run.manifest.levels.find(Phase::cold); it != run.manifest.levels.end())
    levels.insert(it->second.begin(), it->second.end());
  for (const Cell& c : run.cells)
    if (c.key.model == model && c.key.phase == Phase::cold) levels.insert(c.key.concurrency);
  return levels;
}

/// The thread count whose cells the gate judges for `model`: 0 when threads are not a dimension, else
/// the model's encoder.threads (the first listed), or the smallest one its cells show.
int gate_threads(const RunRecord& run, const ModelEntry& model) {
  std::set<int> seen;
  for (const Cell& c : run.cells)
    if (c.key.model == model.name && c.key.threads > 0) seen.insert(c.key.threads);
  if (seen.empty()) return 0;
  return seen.count(model.encoder.threads) ? model.encoder.threads : *seen.begin();
}

/// True when some batch of the group's cells held more than one request (cache counters).
bool batched_more_than_one(const CellGroup& g) {
  for (const Cell* c : g.cells) {
    auto batches = c->cache.find("batches"), items = c->cache.find("batched_items");
    if (batches != c->cache.end() && items != c->cache.end() && items->second > batches->second) return true;
  }
  return false;
}

LevelResult judge_level(const std::string& model, int c, const CellGroup& a, const CellGroup& b,
                        const GateOptions& options) {
  const GateSpec& spec = options.spec;
  LevelResult l;
  l.concurrency = c;
  std::vector<double> e2e_a = a.samples(Stage::e2e), e2e_b = b.samples(Stage::e2e);
  double e2e = mean(e2e_a);
  auto share = [&](Stage s) { return e2e > 0 ? mean(a.samples(s)) / e2e : 0.0; };
  l.shares_m4a = {share(Stage::preprocessing), share(Stage::encode), share(Stage::synthesis_end), share(Stage::queue)};
  double top_share = l.shares_m4a.encode;
  l.top_stage = Stage::encode;
  if (l.shares_m4a.preprocessing > top_share)
    l.top_stage = Stage::preprocessing, top_share = l.shares_m4a.preprocessing;
  if (l.shares_m4a.synthesis > top_share) l.top_stage = Stage::synthesis_end, top_share = l.shares_m4a.synthesis;
  BootstrapOptions bo{spec.bootstrap_resamples,
                      options.seed ^ stable_hash(model) ^ (static_cast<std::uint64_t>(c) * 0x9E3779B97F4A7C15ULL),
                      spec.confidence};
  const Interval& lat = l.p95_e2e_reduction = bootstrap_pair(
      e2e_a, e2e_b,
      [](std::span<const double> x, std::span<const double> y) { return 1.0 - percentile(y, 95) / percentile(x, 95); },
      bo);
  ThroughputPool pa = a.throughput_pool(), pb = b.throughput_pool();
  const Interval& tput = l.throughput_gain = throughput_change(pa, pb, bo);
  l.m4a = {pa.ok, percentile(e2e_a, 95), pa.throughput()};
  l.m4b = {pb.ok, percentile(e2e_b, 95), pb.throughput()};
  if (l.top_stage != Stage::encode) {
    l.outcome = Verdict::no_go;
    l.reason =
        fmt::format("c{}: reference encode is not the top stage of cold M4a E2E ({} is: {:.0f}% vs encode {:.0f}%)", c,
                    l.top_stage == Stage::synthesis_end ? "synthesis" : "preprocessing", 100 * top_share,
                    100 * l.shares_m4a.encode);
  } else if ((lat.lo >= spec.latency_reduction || tput.lo >= spec.throughput_gain) && !batched_more_than_one(b)) {
    l.outcome = Verdict::inconclusive;
    l.reason = fmt::format(
        "c{}: M4b clears a threshold (p95 reduction {:.1f}% [{:.1f}, {:.1f}], throughput gain {:.1f}% "
        "[{:.1f}, {:.1f}]) but no M4b batch held more than one request: the difference is how "
        "many encodes run at once, not batching",
        c, 100 * lat.point, 100 * lat.lo, 100 * lat.hi, 100 * tput.point, 100 * tput.lo, 100 * tput.hi);
  } else if (lat.lo >= spec.latency_reduction || tput.lo >= spec.throughput_gain) {
    l.outcome = Verdict::go;
    l.reason = fmt::format(
        "c{}: M4b p95 E2E reduction {:.1f}% [{:.1f}, {:.1f}], throughput gain {:.1f}% [{:.1f}, {:.1f}]: "
        "an interval's lower bound clears its threshold",
        c, 100 * lat.point, 100 * lat.lo, 100 * lat.hi, 100 * tput.point, 100 * tput.lo, 100 * tput.hi);
  } else if (lat.point >= spec.latency_reduction || tput.point >= spec.throughput_gain) {
    l.outcome = Verdict::inconclusive;
    l.reason = fmt::format(
        "c{}: point estimate clears a threshold but no lower bound does (p95 reduction {:.1f}% [{:.1f}, {:.1f}], "
        "throughput gain {:.1f}% [{:.1f}, {:.1f}])",
        c, 100 * lat.point, 100 * lat.lo, 100 * lat.hi, 100 * tput.point, 100 * tput.lo, 100 * tput.hi);
  } else {
    l.outcome = Verdict::no_go;
    l.reason =
        fmt::format("c{}: M4b gives {:.1f}% lower p95 E2E (needs {:.0f}%) and {:.1f}% more throughput (needs {:.0f}%)",
                    c, 100 * lat.point, 100 * spec.latency_reduction, 100 * tput.point, 100 * spec.throughput_gain);
  }
  return l;
}

/// The parity condition over `model`'s M4b cells: the verdict it allows (GO when it holds) and its line.
std::pair<Verdict, std::string> judge_parity(const RunRecord& run, const std::string& model) {
  ParitySummary total;
  std::vector<std::string> bad, unchecked;
  for (const Cell& c : run.cells) {
    if (c.key.model != model || c.key.arm != Arm::m4b) continue;
    auto batched = c.cache.find("batched_items");
    if (!c.parity) {
      if (batched != c.cache.end() && batched->second > 0) unchecked.push_back(c.key.id());
      continue;
    }
    const ParitySummary& p = *c.parity;
    total.checked += p.checked;
    total.batched += p.batched;
    total.identical += p.identical;
    total.within_tolerance += p.within_tolerance;
    total.mismatched += p.mismatched;
    total.errors += p.errors;
    total.mismatched_codes += p.mismatched_codes;
    total.max_abs_diff = std::max(total.max_abs_diff, p.max_abs_diff);
    total.tolerance = p.tolerance;
    if (!p.holds())
      bad.push_back(c.key.id());
    else if (p.checked == 0 && p.batched > 0)
      unchecked.push_back(c.key.id());
  }
  if (!bad.empty())
    return {Verdict::no_go,
            fmt::format("parity fails: {} of {} checked batched artifacts differ from a single encode of the same "
                        "request ({} failed checks; {} integer elements differ; max abs diff {:.3g}, tolerance {:.3g}) "
                        "in {}: batching would cache artifacts a single encode does not produce",
                        total.mismatched + total.errors, total.checked, total.errors, total.mismatched_codes,
                        total.max_abs_diff, total.tolerance, join(bad, ", "))};
  if (!unchecked.empty())
    return {Verdict::inconclusive, fmt::format("parity not checked for batched requests in {}", join(unchecked, ", "))};
  if (total.checked == 0) return {Verdict::go, "parity: no batched artifact to check"};
  return {Verdict::go,
          fmt::format("parity holds: {} checked batched artifacts ({} identical, {} within tolerance {:.3g}; "
                      "max abs diff {:.3g})",
                      total.checked, total.identical, total.within_tolerance, total.tolerance, total.max_abs_diff)};
}

}  // namespace

GateReport evaluate_gate(const RunRecord& run, const GateOptions& options) {
  GateReport result = evaluate_gate_levels(run, options);
  add_verdict_stability(run, result);
  return result;
}

GateReport evaluate_gate_levels(const RunRecord& run, const GateOptions& options) {
  GateReport result;
  result.options = options;
  auto groups = group_cells(run);
  Verdict worst = Verdict::go;
  for (const ModelEntry& m : run.models) {
    ModelVerdict out;
    out.model = m.name;
    out.evidence_grade = m.evidence_grade;
    if (!m.eligibility.eligible) {
      out.verdict = Verdict::not_applicable;
      out.reason = m.eligibility.reason.empty() ? "not eligible for different-key batching" : m.eligibility.reason;
      result.models.push_back(std::move(out));
      continue;
    }
    std::set<int> levels = cold_levels(run, m.name);
    // Threads profiled as a dimension: the verdict rests on the manifest's first thread count.
    const int threads = gate_threads(run, m);
    auto group = [&](Arm arm, int c) -> const CellGroup* {
      auto it = groups.find(GroupKey{m.name, arm, Phase::cold, c, threads});
      return it == groups.end() || it->second.ok() == 0 ? nullptr : &it->second;
    };
    std::vector<std::string> missing;
    for (int c : levels)
      for (Arm arm : {Arm::m4a, Arm::m4b})
        if (!group(arm, c))
          missing.push_back(fmt::format("{} at concurrency {} ({})", to_string(arm), c,
                                        GroupKey{m.name, arm, Phase::cold, c, threads}.label()));
    if (levels.empty() && !run.capacity) missing.push_back("cold-phase cells (m4a and m4b)");
    if (!missing.empty()) {
      out.verdict = Verdict::missing_arm;
      out.reason = "no cold-cache data for " + join(missing, ", ");
      worst = verdict_rank(Verdict::missing_arm) > verdict_rank(worst) ? Verdict::missing_arm : worst;
      result.models.push_back(std::move(out));
      continue;
    }
    out.verdict = Verdict::go;
    std::vector<std::string> reasons;
    for (int c : levels) {
      LevelResult l = judge_level(m.name, c, *group(Arm::m4a, c), *group(Arm::m4b, c), options);
      reasons.push_back(l.reason);
      // Worst over levels: NO-GO < INCONCLUSIVE < GO.
      if (l.outcome == Verdict::no_go)
        out.verdict = Verdict::no_go;
      else if (l.outcome == Verdict::inconclusive && out.verdict == Verdict::go)
        out.verdict = Verdict::inconclusive;
      out.levels.push_back(std::move(l));
    }
    if ((out.capacity = judge_capacity(run, m.name, options))) {  // capacity_gate.hpp: how the two combine
      out.verdict = combine_capacity(out.verdict, !levels.empty(), *out.capacity);
      reasons.push_back(out.capacity->reason);
    }
    apply_contamination(run, out, reasons);
    auto [parity_verdict, parity_line] = judge_parity(run, m.name);
    out.parity = parity_line;
    if (parity_verdict == Verdict::no_go)
      out.verdict = Verdict::no_go;
    else if (parity_verdict == Verdict::inconclusive && out.verdict == Verdict::go)
      out.verdict = Verdict::inconclusive;
    if (parity_verdict != Verdict::go) reasons.insert(reasons.begin(), parity_line);
    out.reason = join(reasons, "; ");
    if (verdict_rank(out.verdict) > verdict_rank(worst)) worst = out.verdict;
    result.models.push_back(std::move(out));
  }
  result.exit_code = verdict_exit_code(worst);
  return result;
}

}  // namespace refenc::profile
