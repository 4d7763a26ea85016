#include "profile/orchestration/profiler.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/text_report.hpp"
#include "profile/orchestration/capacity_sweep.hpp"
#include "profile/orchestration/cell_warmup.hpp"
#include "profile/orchestration/cell_metrics.hpp"
#include "profile/orchestration/cell_plan.hpp"
#include "profile/manifest/reference_schedule.hpp"
#include "profile/manifest/reference_set.hpp"
#include "profile/orchestration/run_context.hpp"
#include "profile/orchestration/runner.hpp"
#include "profile/orchestration/shared_tier_server.hpp"
#include "profile/orchestration/stopping_rule.hpp"
#include "profile/device/synthesis_model.hpp"
#include "profile/telemetry/telemetry.hpp"
#include "profile/verdict/aa_spread.hpp"
#include "profile/verdict/contamination_rule.hpp"
#include "profile/verdict/gate.hpp"

namespace refenc::profile {
namespace {

using Clock = std::chrono::steady_clock;

LibraryContext ask_library(const ProfileOptions& options) {
  if (!options.library_context) return {.version = "unavailable", .reason = "not asked by this program"};
  try {
    return options.library_context();
  } catch (const std::exception& e) {
    return {.version = "unavailable", .reason = e.what()};
  }
}

/// A temp folder removed on destruction.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& parent) {
    std::string base = parent.empty() ? std::filesystem::temp_directory_path().string() : parent;
    std::string tmpl = base + "/refenc-profile-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw Error(ErrorKind::io, tmpl + ": cannot create a temp folder for the disk tier");
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

class Progress {
 public:
  /// `later`: what the ETA leaves out, e.g. " + capacity sweeps".
  Progress(bool enabled, std::size_t total, std::string later)
      : enabled_(enabled && isatty(2)), total_(total), later_(std::move(later)), t0_(Clock::now()) {}
  void cell(std::string name, std::size_t index, std::size_t cells) {
    std::lock_guard lock(m_);
    cell_ = fmt::format("cell {}/{} {}", index, cells, name);
    draw();
  }
  void add(std::size_t n) {
    std::lock_guard lock(m_);
    done_ += n;
    draw();
  }
  /// More requests than planned: a re-run, a repeat the stopping rule asked for.
  void extend(std::size_t n) {
    std::lock_guard lock(m_);
    total_ += n;
    draw();
  }
  void finish() {
    if (enabled_) std::fputs("\n", stderr);
  }

 private:
  void draw() {
    if (!enabled_) return;
    double el = std::chrono::duration<double>(Clock::now() - t0_).count();
    double eta =
        done_ > 0 ? el / static_cast<double>(done_) * static_cast<double>(total_ - std::min(done_, total_)) : 0;
    std::fprintf(stderr, "\r\033[K%s  %zu/%zu requests  elapsed %.0fs  ETA %.0fs%s", cell_.c_str(), done_, total_, el,
                 eta, later_.c_str());
    std::fflush(stderr);
  }
  bool enabled_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::string later_;
  std::string cell_;
  Clock::time_point t0_;
  std::mutex m_;
};

}  // namespace

Eligibility eligibility(const ModelEntry& info) {
  const std::string& note = info.eligibility.reason;
  if (info.has_internal_batching)
    return {false,
            note.empty()
                ? "has its own batched encoder inside the model's stage, not migrated to the generic batching surface"
                : note};
  if (!info.can_encode_batch) return {false, note.empty() ? "no safe batch primitive: stays M4a-only" : note};
  return {true, note.empty() ? "hook can encode a batch of different keys" : note};
}

int matched_batch_workers(int concurrency, const std::string& device, unsigned cores) {
  if (device.rfind("cuda", 0) == 0) return 1;
  return std::max(1, std::min(concurrency, static_cast<int>(std::max(1u, cores))));
}

ProfileResult run_profile(const Manifest& manifest, const BackendFactory& factory, const ProfileOptions& options) {
  if (options.out_dir.empty()) throw Error(ErrorKind::config, "profile needs an output folder");
  ProfileResult result;
  result.dir = options.out_dir;
  auto t_start = Clock::now();
  std::vector<ReferenceItem> refs = make_reference_set(manifest.references, manifest.seed);
  const int measured = manifest.measured_references();

  RunRecord& run = result.run;
  run.dir = options.out_dir;
  run.status = "running";
  run.context = make_context(manifest);
  run.context.libtorch = ask_library(options);
  run.manifest = {manifest.name, manifest.path, manifest.sha256, manifest.seed, manifest.gate, {}, manifest.raw};
  for (const PhaseSpec& ph : manifest.phases) {
    auto& levels = run.manifest.levels[ph.kind];
    for (int c : ph.concurrency)
      if (std::find(levels.begin(), levels.end(), c) == levels.end()) levels.push_back(c);
  }
  run.have_requests = true;
  run.noise = manifest.noise;
  // The tier shared by replicas (warm-shared cells): a private server lives until the run returns or throws.
  const SharedTierServer shared_server(manifest.cache, options.tmp_root, manifest.path + ": cache.shared");
  run.context.shared_cache = shared_server.description();

  // Count the cells for progress: every arm's cell and A/A twin per repeat slot (re-runs and the
  // stopping rule's extra repeats are added as they happen).
  std::size_t total_requests = 0, total_cells = 0;
  const std::size_t plan_cells = cell_plan(manifest.arms, manifest.noise).size();
  // Repeat slots per concurrency level: repeats, times the thread levels when threads are a dimension.
  auto slots_of = [&](const ModelSpec& s) {
    return static_cast<std::size_t>(manifest.repeats) * std::max<std::size_t>(1, s.thread_levels.size());
  };
  for (std::size_t m = 0; m < manifest.models.size(); ++m)
    for (const auto& ph : manifest.phases)
      total_cells += ph.concurrency.size() * slots_of(manifest.models[m]) * plan_cells,
          total_requests +=
          ph.concurrency.size() * slots_of(manifest.models[m]) * plan_cells * static_cast<std::size_t>(ph.requests);
  Progress progress(options.progress, total_requests, manifest.capacity ? " + capacity sweeps" : "");
  std::size_t cell_index = 0;

  auto stopped = [&] { return options.stop && options.stop->load(); };
  // The transcript follows the reference (a voice's prompt keeps its text); the target text cycles.
  auto work_item = [&](std::size_t i, std::size_t ref) {
    const auto& texts = manifest.texts;
    return WorkItem{i, &refs[ref], texts[i % texts.size()], texts[ref % texts.size()]};
  };
  for (const ModelSpec& spec : manifest.models) {
    if (stopped()) break;
    std::unique_ptr<ModelBackend> backend = factory(spec);
    const ModelEntry& info = backend->info();
    CellWarmup cell_warmup;  // the backend's process: each call shape primed once
    ModelEntry entry = info;
    entry.name = spec.name;
    entry.eligibility = eligibility(info);
    entry.encoder = spec.encoder;
    entry.synthesis = spec.synthesis;
    run.models.push_back(entry);
    const Eligibility elig = entry.eligibility;
    std::vector<ArmSpec> arms;
    for (const ArmSpec& arm : manifest.arms) {
      if (arm.arm == Arm::m4b && !elig.eligible) {
        run.skipped.push_back({spec.name, Arm::m4b, elig.reason});
        continue;
      }
      arms.push_back(arm);
    }
    if (const std::size_t skipped = plan_cells - cell_plan(arms, manifest.noise).size(); skipped > 0)
      for (const auto& ph : manifest.phases) {  // the skipped arm's cells (and twins) count as done
        std::size_t n = ph.concurrency.size() * slots_of(spec) * skipped;
        total_cells -= n;
        progress.add(n * static_cast<std::size_t>(ph.requests));
      }

    for (const PhaseSpec& phase : manifest.phases) {
      const int warmup_refs = manifest.warmup_references();
      const std::vector<std::size_t> schedule = reference_schedule(
          manifest.references, phase, static_cast<std::size_t>(measured + warmup_refs), manifest.seed);
      const std::vector<double> arrivals = trace_arrivals(manifest.references, phase);
      std::vector<WorkItem> items(schedule.size());
      for (std::size_t i = 0; i < schedule.size(); ++i) items[i] = work_item(i, schedule[i]);
      std::vector<WorkItem> distinct;  // what a warm phase loads first: the phase's references
      for (int i = 0; i < phase.distinct; ++i)
        distinct.push_back(work_item(static_cast<std::size_t>(i), static_cast<std::size_t>(i)));

      for (int conc : phase.concurrency) {
        // Thread levels outermost (when threads are a dimension); the stopping rule applies to the
        // level the gate judges (the first), the others run `repeats` times.
        for (std::size_t t = 0; t < std::max<std::size_t>(1, spec.thread_levels.size()); ++t) {
          const int threads = spec.thread_levels.empty() ? 0 : spec.thread_levels[t];
          for (int rep = 0; t == 0 ? keep_repeating(run, manifest, spec.name, phase.kind, conc, rep, run.noise->stops)
                                   : rep < manifest.repeats;
               ++rep) {
            if (stopped()) break;
            // The arms interleaved, then A/A twins; a contaminated cell's re-run goes in right after it.
            std::vector<CellPlan> plan = cell_plan(arms, manifest.noise);
            if (rep >= manifest.repeats) {  // a repeat the stopping rule asked for
              total_cells += plan.size();
              progress.extend(plan.size() * static_cast<std::size_t>(phase.requests));
            }
            for (std::size_t k = 0; k < plan.size(); ++k) {
              const ArmSpec arm = plan[k].arm;
              if (stopped()) break;
              CellKey key{spec.name, arm.arm, phase.kind, conc, rep, threads};
              if (threads > 0 && !backend->set_intra_op_threads(threads))
                throw Error(ErrorKind::config, spec.name +
                                                   ": this backend cannot set intra-op threads (encoder.threads "
                                                   "as a list)");
              ArmSpec cell_arm = arm;
              if (arm.arm == Arm::m4b && arm.batch_workers == 0)
                cell_arm.batch_workers = backend->device_streams() > 0
                                             ? std::min(conc, backend->device_streams())
                                             : matched_batch_workers(conc, spec.encoder.device, run.context.cores);
              progress.cell(key.id(), ++cell_index, total_cells);
              std::unique_ptr<TempDir> tier_dir;
              std::unique_ptr<ServiceHandle> service;
              RunOptions setup{.concurrency = conc, .stop = options.stop};
              if (phase.kind == Phase::warm_disk) {
                tier_dir = std::make_unique<TempDir>(options.tmp_root);
                auto writer = backend->make_service(cell_arm, manifest.cache, tier_dir->path);
                run_requests(*writer, distinct, setup, nullptr, info.frame_rate);
                writer.reset();
                service = backend->make_service(cell_arm, manifest.cache, tier_dir->path);
              } else if (phase.kind == Phase::warm_shared) {
                // Replica A (its own disk folder) fills the shared tier untimed; replica B, measured, has
                // empty memory and disk tiers over the same shared tier (the cell's own key prefix).
                const CacheSpec shared_cache = shared_server.for_cell(manifest.cache, cell_index);
                const TempDir replica_a_dir(options.tmp_root);
                auto replica_a = backend->make_service(cell_arm, shared_cache, replica_a_dir.path);
                run_requests(*replica_a, distinct, setup, nullptr, info.frame_rate);
                replica_a.reset();
                tier_dir = std::make_unique<TempDir>(options.tmp_root);
                service = backend->make_service(cell_arm, shared_cache, tier_dir->path);
              } else {
                service = backend->make_service(cell_arm, manifest.cache, "");
                if (phase.kind == Phase::warm) run_requests(*service, distinct, setup, nullptr, info.frame_rate);
              }
              std::vector<WorkItem> warmup;
              for (int w = 0; warmup_refs > 0 && w < manifest.warmup_requests(conc); ++w)
                warmup.push_back(
                    work_item(static_cast<std::size_t>(w), static_cast<std::size_t>(measured + w % warmup_refs)));
              cell_warmup.run(*service, warmup, largest_calls(cell_arm, conc, backend->intra_op_threads()),
                              {.concurrency = conc, .stop = options.stop}, info.frame_rate);
              // Parity: every batched artifact of a cold cell, a sample elsewhere; checked after the timed window.
              const std::size_t parity_sample =
                  phase.kind == Phase::cold || arm.parity_sample == 0 ? 0 : static_cast<std::size_t>(arm.parity_sample);
              if (service->batching()) service->keep_batched(parity_sample == 0 ? SIZE_MAX : parity_sample);
              SynthesisModel synth(spec.synthesis, options.sleep_synthesis);
              RunOptions ro{.concurrency = conc,
                            .open_loop = manifest.arrivals.open_loop || !arrivals.empty(),
                            .rate_per_s = manifest.arrivals.rate_per_s,
                            .arrivals_s = arrivals,
                            .seed = manifest.seed + static_cast<std::uint64_t>(rep),
                            .stop = options.stop,
                            .on_done = [&](std::size_t) { progress.add(1); }};
              ServiceStats before = service->stats();
              TelemetrySampler telemetry;
              const ProcSnapshot host_start = options.host_probe ? options.host_probe() : ProcSnapshot{};
              RunResult cell_run = run_requests(*service, items, ro, &synth, info.frame_rate);
              TelemetrySummary tel = telemetry.stop();
              std::optional<HostLoad> host;
              if (options.host_probe) host = host_load_between(host_start, options.host_probe());
              const std::vector<std::string> dirty =
                  host ? contamination_reasons(*host, manifest.noise.contamination) : std::vector<std::string>{};
              ServiceStats delta = service->stats().minus(before);
              bool batching = service->batching();
              std::optional<ParitySummary> parity;
              if (batching)
                parity = record_parity(service->check_parity(), cell_run.records, spec.encoder.parity_tolerance,
                                       parity_sample);
              service.reset();
              if (cell_run.records.empty() && stopped()) break;
              if (rerun_contaminated(dirty, plan[k].attempt, manifest.noise.contamination) && !stopped()) {
                plan.insert(plan.begin() + static_cast<std::ptrdiff_t>(k) + 1, plan[k].retry(*host));
                ++total_cells;
                progress.extend(static_cast<std::size_t>(phase.requests));
                continue;
              }
              run.cells.push_back(make_cell(key, cell_run, delta, tel, ro.open_loop, batching));
              add_cache_reuse(run.cells.back(), cell_run.records, manifest.cache);
              run.cells.back().parity = parity;
              run.cells.back().compute = ArmCompute{arm.arm == Arm::m4b ? cell_arm.batch_workers : conc,
                                                    arm.arm == Arm::m4b ? cell_arm.batch_workers : 0,
                                                    backend->intra_op_threads(), spec.encoder.device};
              if (parity && !parity->holds())
                run.cells.back().warnings.push_back(fmt::format(
                    "parity: {} of {} checked batched artifacts differ from a single encode of the same request",
                    parity->mismatched + parity->errors, parity->checked));
              if (phase.kind == Phase::warm_shared)
                for (std::string& w : shared_tier_warnings(delta)) run.cells.back().warnings.push_back(std::move(w));
              for (RequestRecord& rec : cell_run.records) {  // each row says what compute its arm had
                rec.batch_workers = run.cells.back().compute->batch_workers;
                rec.intra_op_threads = run.cells.back().compute->intra_op_threads;
              }
              run.requests[plan[k].aa ? aa_cell_id(key) : key.id()] = std::move(cell_run.records);
              finish_cell(run, plan[k], host, dirty);
            }
          }
        }
      }
    }
    if (manifest.capacity && !stopped())
      run_capacity_sweeps({manifest, spec, *backend, arms, refs, run.context.cores, options.stop,
                           options.sleep_synthesis, &cell_warmup},
                          run);
  }
  progress.finish();
  result.interrupted = stopped();
  run.status = result.interrupted ? "interrupted" : "complete";
  run.wall_s = std::chrono::duration<double>(Clock::now() - t_start).count();
  for (const ModelEntry& m : run.models)
    run.context.encoders.push_back({m.name, m.scale, m.evidence_grade, m.real_weights});
  if (options.library_context) run.context.libtorch = ask_library(options);  // threads as the encoders left them
  run.noise->aa_spread = aa_spread(run);
  run.gate = evaluate_gate(run, run.gate_options());
  write_run(options.out_dir, run, summary_markdown(run));
  return result;
}

}  // namespace refenc::profile
