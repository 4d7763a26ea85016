#include "profile/orchestration/capacity_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "profile/orchestration/profiler.hpp"
#include "profile/manifest/reference_schedule.hpp"
#include "profile/orchestration/runner.hpp"
#include "profile/device/synthesis_model.hpp"
#include "profile/verdict/capacity_gate.hpp"

namespace refenc::profile {
namespace {

struct ArmSweep {
  ArmSpec arm;
  CapacitySweep sweep;
  std::vector<RatePoint> points;
  std::size_t next_listed = 0;
  bool done = false;
};

}  // namespace

void run_capacity_sweeps(const SweepInputs& in, RunRecord& run) {
  const Manifest& m = in.manifest;
  if (!m.capacity) throw Error(ErrorKind::config, "capacity sweep without a capacity block");
  const CapacitySpec& cap = *m.capacity;
  if (!run.capacity) {
    run.capacity = CapacityReport{};
    run.capacity->slo = cap.slo;
    run.capacity->arrivals = cap.uniform ? "uniform" : "poisson";
    run.capacity->rates = cap.rates.empty() ? "auto" : "list";
  }
  const PhaseSpec& phase =
      *std::find_if(m.phases.begin(), m.phases.end(), [](const PhaseSpec& p) { return p.kind == Phase::cold; });
  const int measured = m.measured_references(), warmup_refs = m.warmup_references();
  const std::vector<std::size_t> schedule =
      reference_schedule(m.references, phase, static_cast<std::size_t>(measured + warmup_refs), m.seed);
  auto work_item = [&](std::size_t i, std::size_t ref) {
    return WorkItem{i, &in.refs[ref], m.texts[i % m.texts.size()], m.texts[ref % m.texts.size()]};
  };
  std::vector<WorkItem> items(schedule.size());
  for (std::size_t i = 0; i < schedule.size(); ++i) items[i] = work_item(i, schedule[i]);
  const int conc = cap.concurrency;
  const GateOptions gate_options{m.gate, m.seed};

  std::vector<ArmSweep> arms;
  for (const ArmSpec& a : in.arms) {
    ArmSweep s{a, {in.spec.name, a.arm, conc, {}, {}, false}, {}, 0, false};
    if (a.arm == Arm::m4b && a.batch_workers == 0)
      s.arm.batch_workers = matched_batch_workers(conc, in.spec.encoder.device, in.cores);
    arms.push_back(std::move(s));
  }
  CellWarmup own_warmup;
  CellWarmup& cell_warmup = in.warmup ? *in.warmup : own_warmup;
  auto stopped = [&] { return in.stop && in.stop->load(); };
  auto next_rate = [&](ArmSweep& s) -> std::optional<double> {
    if (!cap.rates.empty())
      return s.next_listed < cap.rates.size() ? std::optional<double>(cap.rates[s.next_listed]) : std::nullopt;
    return next_search_rate(s.points, cap.search);
  };

  for (bool any = true; any && !stopped();) {
    any = false;
    for (ArmSweep& s : arms) {
      if (s.done || stopped()) continue;
      std::optional<double> rate = next_rate(s);
      if (!rate) {
        s.done = true;
        continue;
      }
      any = true;
      ++s.next_listed;
      const int index = static_cast<int>(s.sweep.steps.size());
      auto service = in.backend.make_service(s.arm, m.cache, "");
      std::vector<WorkItem> warmup;
      for (int w = 0; warmup_refs > 0 && w < m.warmup_requests(conc); ++w)
        warmup.push_back(work_item(static_cast<std::size_t>(w), static_cast<std::size_t>(measured + w % warmup_refs)));
      cell_warmup.run(*service, warmup, largest_calls(s.arm, conc, in.backend.intra_op_threads()),
                      {.concurrency = conc, .stop = in.stop}, in.backend.info().frame_rate);
      RunOptions ro{.concurrency = conc,
                    .open_loop = true,
                    .rate_per_s = *rate,
                    .seed = m.seed + static_cast<std::uint64_t>(std::llround(*rate * 1000)),
                    .stop = in.stop};
      if (cap.uniform)
        for (std::size_t i = 0; i < items.size(); ++i) ro.arrivals_s.push_back(static_cast<double>(i) / *rate);
      SynthesisModel synth(in.spec.synthesis, in.sleep_synthesis);
      const ServiceStats before = service->stats();
      RunResult result = run_requests(*service, items, ro, &synth, in.backend.info().frame_rate);
      const ServiceStats delta = service->stats().minus(before);
      service.reset();
      if (result.records.empty()) break;
      for (RequestRecord& r : result.records) r.rate_step = index, r.rate_per_s = *rate;
      RateStep step = summarize_step(index, *rate, result.records, cap.slo,
                                     capacity_bootstrap(gate_options, s.sweep.step_id(index)));
      step.batches = delta.batches;
      step.batched_items = delta.batched_items;
      step.generator_behind = result.generator_behind;
      s.points.push_back({*rate, step.meets_slo});
      s.sweep.steps.push_back(step);
      run.requests[s.sweep.step_id(index)] = std::move(result.records);
      if (result.interrupted) break;
    }
  }
  for (ArmSweep& s : arms) {
    if (s.sweep.steps.empty()) continue;
    finish_sweep(s.sweep, run, cap.slo.ttfa_ms, gate_options);
    run.capacity->sweeps.push_back(std::move(s.sweep));
  }
}

}  // namespace refenc::profile
