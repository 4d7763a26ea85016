#include "profile/render/text_report.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "profile/render/shared_tier_text.hpp"
#include "profile/render/capacity_text.hpp"
#include "profile/render/reuse_text.hpp"
#include "profile/render/noise_text.hpp"

namespace refenc::profile {

std::string summary_table(const RunRecord& run) {
  std::ostringstream os;
  std::size_t w = 34;  // the cell column fits the longest id
  for (const Cell& c : run.cells) w = std::max(w, c.key.id().size());
  os << fmt::format("{:<{}} {:>4} {:>4} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6}\n", "cell", w, "n", "err",
                    "pre p50", "enc p50", "enc p95", "ttfa p95", "e2e p50", "e2e p95", "req/s", "hit%");
  for (const Cell& c : run.cells) {
    double n = static_cast<double>(c.count);
    double hits = hit_requests(c);
    os << fmt::format("{:<{}} {:>4} {:>4} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>8.1f} {:>7.2f} {:>5.0f}%\n",
                      c.key.id(), w, c.count, c.errors, 1000 * c.stage(Stage::preprocessing).p50,
                      1000 * c.stage(Stage::encode).p50, 1000 * c.stage(Stage::encode).p95,
                      1000 * c.stage(Stage::ttfa).p95, 1000 * c.stage(Stage::e2e).p50, 1000 * c.stage(Stage::e2e).p95,
                      c.throughput_rps, n > 0 ? 100.0 * hits / n : 0.0);
  }
  os << "(latencies in ms; preprocessing and encode measured, synthesis modelled; hit% = hit + disk_hit + "
        "shared_hit + merged)\n";
  os << shared_tier_lines(run);
  os << capacity_table(run);
  return os.str();
}

std::string summary_markdown(const RunRecord& run) {
  std::ostringstream os;
  const RunContext& ctx = run.context;
  os << "# refenc profile: " << run.manifest.name << "\n\n";
  os << "- status: **" << run.status << "**\n";
  os << "- host: " << ctx.host << ", " << ctx.cpu_model << ", " << ctx.cores << " cores\n";
  if (const auto& l = ctx.libtorch) {
    os << "- LibTorch " << l->version << ", BLAS " << l->blas;
    if (l->blas_threads > 0) os << " (" << l->blas_threads << " thread" << (l->blas_threads == 1 ? "" : "s") << ")";
    if (!l->allocator.empty()) os << ", malloc " << l->allocator;
    os << "\n";
  }
  os << "- git " << ctx.git_revision << ", manifest " << ctx.manifest_path << " (sha256 "
     << ctx.manifest_sha256.substr(0, 16) << "...), seed " << ctx.seed << "\n";
  for (const ModelEntry& m : run.models)
    os << "- model " << m.name << ": " << m.evidence_grade << "; " << m.eligibility.reason << "\n";
  bool any_modelled = false;
  for (const ModelEntry& m : run.models) {
    if (!m.calibration) continue;
    any_modelled = true;
    os << "- model " << m.name << ": reference encode is **modelled** (a device queue costed by calibration "
       << m.calibration->name << ", " << m.calibration->origin << "; source: " << m.calibration->source << ")\n";
  }
  os << "\nStages: preprocessing and reference encode are **measured**"
     << (any_modelled ? " (reference encode **modelled** for the models on a modelled device above)" : "")
     << "; synthesis is **modelled** (a "
        "continuous-batching engine that sleeps; parameters and their sources in the manifest); TTFA and E2E "
        "add both. Percentiles: nearest rank.\n\n```\n"
     << summary_table(run) << "```\n";
  bool gpu_energy = false;
  for (const Cell& c : run.cells) {
    const GpuSummary& g = c.telemetry.gpu;
    if (!g.available || (g.metrics.power.samples == 0 && g.energy_method.empty())) continue;
    if (!gpu_energy)
      os << "\nGPU 0 power and energy (measured, NVML; J per encode = the device's energy over the cell / "
            "its encodes, misses - disk_hits + uncacheable):\n";
    gpu_energy = true;
    os << "- " << c.key.id() << ":";
    if (g.metrics.power.samples > 0)
      os << fmt::format(" power {:.1f} W mean, {:.1f} W max;", g.power_mean_w, g.power_max_w);
    if (g.energy_method.empty())
      os << " energy " << g.metrics.energy.unavailable << "\n";
    else
      os << fmt::format(" {:.2f} J ({}), {} encodes{}\n", g.energy_j, g.energy_method, g.encodes,
                        g.encodes > 0 ? fmt::format(", {:.3f} J per encode", g.energy_per_encode_j) : "");
  }
  if (!run.skipped.empty()) {
    os << "\nSkipped:\n";
    for (const SkippedArm& s : run.skipped)
      os << "- " << s.model << " " << to_string(s.arm) << ": " << s.reason << "\n";
  }
  bool compute_header = false;
  for (const Cell& c : run.cells) {
    if (!c.compute || c.key.repeat != 0 || c.key.phase != Phase::cold) continue;
    if (!compute_header) os << "\nCompute per arm (cold cells; warm cells alike):\n";
    compute_header = true;
    const ArmCompute& a = *c.compute;
    os << fmt::format("- {}: {} encodes at once{}, {} intra-op threads, {}\n", c.key.id(), a.encode_threads,
                      a.batch_workers ? fmt::format(" ({} batch workers)", a.batch_workers) : "",
                      a.intra_op_threads ? std::to_string(a.intra_op_threads) : "unknown", a.device);
  }
  bool parity_header = false;
  for (const Cell& c : run.cells) {
    if (!c.parity) continue;
    if (!parity_header) os << "\nParity of batched artifacts with single encodes (M4b):\n";
    parity_header = true;
    const ParitySummary& p = *c.parity;
    os << fmt::format(
        "- {}: {} of {} batched checked{}: {} identical, {} within tolerance {:.3g}, {} mismatched, "
        "{} failed checks; max abs diff {:.3g}, {} integer elements differ\n",
        c.key.id(), p.checked, p.batched, p.sample ? fmt::format(" (sample of at most {})", p.sample) : "", p.identical,
        p.within_tolerance, p.tolerance, p.mismatched, p.errors, p.max_abs_diff, p.mismatched_codes);
  }
  bool any = false;
  for (const Cell& c : run.cells)
    for (const std::string& w : c.warnings) {
      if (!any) os << "\nWarnings:\n";
      any = true;
      os << "- " << c.key.id() << ": " << w << "\n";
    }
  os << reuse_table(run);
  os << noise_markdown(run);
  if (run.gate) os << "\n```\n" << format_gate(*run.gate) << "```\n";
  return os.str();
}

std::string format_gate(const GateReport& gate) {
  std::ostringstream os;
  const GateSpec& spec = gate.options.spec;
  os << "M4b gate (latency >= " << spec.latency_reduction * 100
     << "% lower p95 E2E or throughput >= " << spec.throughput_gain * 100 << "% higher, " << spec.confidence * 100
     << "% bootstrap CI):\n";
  for (const ModelVerdict& m : gate.models) {
    os << fmt::format("  {:<16} {:<15} [{}]\n", m.model, to_string(m.verdict), m.evidence_grade);
    if (!m.levels.empty()) {
      for (const LevelResult& c : m.levels) {
        const StageShares& s = c.shares_m4a;
        const Interval &r = c.p95_e2e_reduction, &g = c.throughput_gain;
        os << fmt::format(
            "      c{:<3} {:<12} shares pre {:.0f}% enc {:.0f}% synth {:.0f}% | p95 red {:+.1f}% [{:+.1f}, {:+.1f}]"
            " | tput {:+.1f}% [{:+.1f}, {:+.1f}]\n",
            c.concurrency, to_string(c.outcome), 100 * s.preprocessing, 100 * s.encode, 100 * s.synthesis,
            100 * r.point, 100 * r.lo, 100 * r.hi, 100 * g.point, 100 * g.lo, 100 * g.hi);
      }
    } else {
      os << "      " << m.reason << '\n';
    }
    if (!m.parity.empty()) os << "      " << m.parity << '\n';
    if (m.capacity) os << fmt::format("      capacity {:<12} {}\n", to_string(m.capacity->outcome), m.capacity->reason);
    for (const std::string& line : verdict_noise_lines(m)) os << "      " << line << '\n';
  }
  os << "  exit code " << gate.exit_code << '\n';
  return os.str();
}

std::string format_compare(const CompareResult& r) {
  std::ostringstream os;
  os << compare_runs_line(r);
  os << fmt::format("{:<30} {:<18} {:>10} {:>10} {:>26} {:>7} {:>6}  {}\n", "cell", "metric", "baseline", "current",
                    "change [95% CI]", "floor", "U p", "");
  for (const CellChange& c : r.cells) {
    for (const MetricChange& m : c.metrics) {
      bool tput = m.metric == CompareMetric::throughput;
      double scale = tput ? 1.0 : 1000.0;
      os << fmt::format("{:<30} {:<18} {:>10.2f} {:>10.2f} {:>+8.1f}% [{:+.1f}, {:+.1f}] {:>6.1f}% {:>6}  {}\n",
                        c.group.label(), std::string(to_string(m.metric)) + (tput ? " (req/s)" : " (ms)"),
                        scale * m.baseline, scale * m.current, 100 * m.change.point, 100 * m.change.lo,
                        100 * m.change.hi, 100 * m.noise_floor,
                        m.p_value < 0 ? std::string("-") : fmt::format("{:.3f}", m.p_value),
                        std::string(m.regression ? "REGRESSION" : "") + (c.contaminated ? " (contaminated)" : ""));
    }
  }
  for (const GroupKey& u : r.unmatched) os << "unmatched cell (in one run only): " << u.label() << '\n';
  os << fmt::format("{} cells compared, {} with a regression beyond {:.0f}% and the noise floor\n", r.matched,
                    r.regressions, 100 * r.threshold);
  if (r.contaminated > 0)
    os << fmt::format("{} cells ran on a busy machine (contaminated) on one side or both: {}\n", r.contaminated,
                      r.judge_contaminated ? "judged all the same (--judge-contaminated)" : "they decide nothing");
  return os.str();
}

}  // namespace refenc::profile
