#include "profile/verdict/capacity_gate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "profile/stats/percentile.hpp"

namespace refenc::profile {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

const CapacitySweep* find_sweep(const RunRecord& run, const std::string& model, Arm arm) {
  for (const CapacitySweep& s : run.capacity->sweeps)
    if (s.model == model && s.arm == arm) return &s;
  return nullptr;
}

std::string rate_text(const Interval& i, bool censored) {
  return fmt::format("{}{:.3g} req/s [{:.3g}, {:.3g}]", censored ? ">= " : "", i.point, i.lo, i.hi);
}

std::string pct_text(double v) { return std::isfinite(v) ? fmt::format("{:.1f}", 100 * v) : "inf"; }

}  // namespace

std::vector<double> step_ttfa_samples(const std::vector<RequestRecord>& records) {
  std::vector<double> v;
  for (const RequestRecord& r : records) v.push_back(r.ok() ? r.ttfa_s : inf);
  return v;
}

std::vector<SweepStep> sweep_steps(const RunRecord& run, const CapacitySweep& sweep) {
  std::vector<SweepStep> steps;
  for (const RateStep& st : sweep.steps) {
    auto it = run.requests.find(sweep.step_id(st.index));
    if (it == run.requests.end() || it->second.empty()) continue;
    steps.push_back({st.rate_per_s, step_ttfa_samples(it->second)});
  }
  return steps;
}

BootstrapOptions capacity_bootstrap(const GateOptions& options, const std::string& name) {
  return {options.spec.bootstrap_resamples, options.seed ^ stable_hash(name), options.spec.confidence};
}

RateStep summarize_step(int index, double rate_per_s, const std::vector<RequestRecord>& records, const SloSpec& slo,
                        const BootstrapOptions& bootstrap) {
  RateStep s;
  s.index = index;
  s.rate_per_s = rate_per_s;
  s.requests = records.size();
  double first = inf, last = 0;
  std::vector<double> ok_ttfa, ok_e2e;
  for (const RequestRecord& r : records) {
    first = std::min(first, r.scheduled_s);
    if (!r.ok()) {
      ++s.errors;
      last = std::max(last, r.scheduled_s);
      continue;
    }
    last = std::max(last, r.scheduled_s + r.e2e_s);
    ok_ttfa.push_back(r.ttfa_s);
    ok_e2e.push_back(r.e2e_s);
    if (r.ttfa_s * 1000 <= slo.ttfa_ms && r.e2e_s * 1000 <= slo.e2e_ms) ++s.good;
  }
  if (records.empty()) return s;
  s.span_s = last - first;
  s.goodput = static_cast<double>(s.good) / static_cast<double>(s.requests);
  if (s.span_s > 0) {
    s.goodput_rps = static_cast<double>(s.good) / s.span_s;
    s.throughput_rps = static_cast<double>(ok_ttfa.size()) / s.span_s;
  }
  s.p95_ttfa_s = bootstrap_one(step_ttfa_samples(records), p95_ttfa, bootstrap);
  s.meets_slo = s.p95_ttfa_s.point * 1000 <= slo.ttfa_ms;
  if (!ok_ttfa.empty()) {
    s.p50_ttfa_s = percentile(ok_ttfa, 50);
    s.p95_e2e_s = percentile(ok_e2e, 95);
  }
  return s;
}

void finish_sweep(CapacitySweep& sweep, const RunRecord& run, double slo_ttfa_ms, const GateOptions& options) {
  std::vector<SweepStep> steps = sweep_steps(run, sweep);
  if (steps.empty()) {
    sweep.capacity_rps = {};
    sweep.censored = false;
    return;
  }
  sweep.capacity_rps = capacity_interval(steps, slo_ttfa_ms / 1000, capacity_bootstrap(options, sweep.id()));
  sweep.censored = capacity_censored(to_points(steps, slo_ttfa_ms / 1000));
}

std::optional<CapacityResult> judge_capacity(const RunRecord& run, const std::string& model,
                                             const GateOptions& options) {
  if (!run.capacity) return std::nullopt;
  CapacityResult r;
  r.slo_ttfa_ms = run.capacity->slo.ttfa_ms;
  const double slo_s = r.slo_ttfa_ms / 1000;
  const CapacitySweep *a = find_sweep(run, model, Arm::m4a), *b = find_sweep(run, model, Arm::m4b);
  std::vector<SweepStep> sa = a ? sweep_steps(run, *a) : std::vector<SweepStep>{};
  std::vector<SweepStep> sb = b ? sweep_steps(run, *b) : std::vector<SweepStep>{};
  if (sa.empty() || sb.empty()) {
    r.outcome = Verdict::missing_arm;
    r.reason = fmt::format("capacity: no rate sweep with requests for {}", sa.empty() ? "m4a" : "m4b");
    return r;
  }
  r.m4a_rps = capacity_interval(sa, slo_s, capacity_bootstrap(options, a->id()));
  r.m4b_rps = capacity_interval(sb, slo_s, capacity_bootstrap(options, b->id()));
  r.m4a_censored = capacity_censored(to_points(sa, slo_s));
  r.m4b_censored = capacity_censored(to_points(sb, slo_s));
  r.gain = capacity_change(sa, sb, slo_s, capacity_bootstrap(options, model + "/capacity"));
  bool batched = false;
  for (const RateStep& st : b->steps) batched = batched || st.batched_items > st.batches;
  const double need = options.spec.throughput_gain;
  const std::string figures =
      fmt::format("capacity at p95 TTFA <= {:g} ms: M4a {}, M4b {}, gain {}% [{}, {}]", r.slo_ttfa_ms,
                  rate_text(r.m4a_rps, r.m4a_censored), rate_text(r.m4b_rps, r.m4b_censored), pct_text(r.gain.point),
                  pct_text(r.gain.lo), pct_text(r.gain.hi));
  if (r.m4a_rps.point <= 0) {
    r.outcome = Verdict::inconclusive;
    r.reason = figures + ": M4a meets the SLO at no swept rate (sweep lower rates)";
  } else if (r.m4a_censored) {
    r.outcome = Verdict::inconclusive;
    r.reason = figures +
               ": M4a meets the SLO at every swept rate, so its capacity is only a lower bound (sweep "
               "higher rates)";
  } else if (r.gain.lo >= need && !batched) {
    r.outcome = Verdict::inconclusive;
    r.reason = figures + ": clears the threshold but no M4b batch held more than one request (not batching)";
  } else if (r.gain.lo >= need) {
    r.outcome = Verdict::go;
    r.reason = figures + fmt::format(": the interval clears the {:.0f}% threshold", 100 * need);
  } else if (r.gain.point >= need) {
    r.outcome = Verdict::inconclusive;
    r.reason = figures + fmt::format(": the point clears the {:.0f}% threshold, the interval does not", 100 * need);
  } else {
    r.outcome = Verdict::no_go;
    r.reason = figures + fmt::format(": below the {:.0f}% threshold", 100 * need);
  }
  return r;
}

Verdict combine_capacity(Verdict closed_loop, bool have_levels, const CapacityResult& capacity) {
  if (!have_levels) return capacity.outcome;
  if (closed_loop == Verdict::missing_arm || capacity.outcome == Verdict::missing_arm) return Verdict::missing_arm;
  auto goodness = [](Verdict v) { return v == Verdict::go ? 2 : v == Verdict::inconclusive ? 1 : 0; };
  return goodness(capacity.outcome) > goodness(closed_loop) ? capacity.outcome : closed_loop;
}

}  // namespace refenc::profile
