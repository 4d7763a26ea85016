#include "profile/profiler.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/cell_metrics.hpp"
#include "profile/reference_set.hpp"
#include "profile/run_report.hpp"
#include "profile/runner.hpp"
#include "profile/synthesis_model.hpp"
#include "profile/telemetry.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

json synthesis_json(const SynthesisSpec& s) {
  return json{{"source", s.source},
              {"prefill_base_ms", s.prefill_base_ms},
              {"prefill_per_ref_frame_ms", s.prefill_per_ref_frame_ms},
              {"prefill_per_text_token_ms", s.prefill_per_text_token_ms},
              {"step_base_ms", s.step_base_ms},
              {"step_per_active_ms", s.step_per_active_ms},
              {"steps_to_first_audio", s.steps_to_first_audio},
              {"steps_per_audio_second", s.steps_per_audio_second},
              {"audio_seconds_per_text_token", s.audio_seconds_per_text_token},
              {"chars_per_text_token", s.chars_per_text_token}};
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
  Progress(bool enabled, std::size_t total) : enabled_(enabled && isatty(2)), total_(total), t0_(Clock::now()) {}
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
  void finish() {
    if (enabled_) std::fputs("\n", stderr);
  }

 private:
  void draw() {
    if (!enabled_) return;
    double el = std::chrono::duration<double>(Clock::now() - t0_).count();
    double eta = done_ > 0 ? el / static_cast<double>(done_) * static_cast<double>(total_ - std::min(done_, total_)) : 0;
    std::fprintf(stderr, "\r\033[K%s  %zu/%zu requests  elapsed %.0fs  ETA %.0fs", cell_.c_str(), done_, total_, el, eta);
    std::fflush(stderr);
  }
  bool enabled_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::string cell_;
  Clock::time_point t0_;
  std::mutex m_;
};

}  // namespace

json eligibility(const ModelInfo& info) {
  if (info.has_internal_batching)
    return {{"eligible", false},
            {"reason", info.batching_note.empty()
                           ? "has its own batched encoder inside the model's stage, not migrated to the generic batching surface"
                           : info.batching_note}};
  if (!info.can_encode_batch)
    return {{"eligible", false},
            {"reason", info.batching_note.empty() ? "no safe batch primitive: stays M4a-only" : info.batching_note}};
  return {{"eligible", true},
          {"reason", info.batching_note.empty() ? "hook can encode a batch of different keys" : info.batching_note}};
}

ProfileResult run_profile(const Manifest& manifest, const BackendFactory& factory, const ProfileOptions& options) {
  if (options.out_dir.empty()) throw Error(ErrorKind::config, "profile needs an output folder");
  ProfileResult result;
  result.dir = options.out_dir;
  auto t_start = Clock::now();
  std::vector<ReferenceItem> refs = make_reference_set(manifest.references, manifest.seed);
  const int measured = manifest.measured_references();

  json report{{"schema", "refenc-profile-report"},
              {"schema_version", report_schema_version},
              {"status", "running"},
              {"context", make_context(manifest)},
              {"manifest",
               {{"name", manifest.name},
                {"path", manifest.path},
                {"sha256", manifest.sha256},
                {"seed", manifest.seed},
                {"gate",
                 {{"latency_reduction", manifest.gate.latency_reduction},
                  {"throughput_gain", manifest.gate.throughput_gain},
                  {"bootstrap_resamples", manifest.gate.bootstrap_resamples},
                  {"confidence", manifest.gate.confidence}}},
                {"content", manifest.raw}}},
              {"percentile_method", "nearest rank: the sample at 1-based rank ceil(p/100 * n) of the sorted samples"},
              {"stage_kinds", json::object()},
              {"models", json::array()},
              {"cells", json::array()},
              {"skipped", json::array()}};
  for (const auto& [stage, kind] : stage_kinds()) report["stage_kinds"][stage] = kind;

  // Count the cells for progress.
  std::size_t total_requests = 0, total_cells = 0;
  for (std::size_t m = 0; m < manifest.models.size(); ++m)
    for (const auto& ph : manifest.phases)
      total_cells += ph.concurrency.size() * static_cast<std::size_t>(manifest.repeats) * manifest.arms.size(),
          total_requests += ph.concurrency.size() * static_cast<std::size_t>(manifest.repeats) * manifest.arms.size() *
                            static_cast<std::size_t>(ph.requests);
  Progress progress(options.progress, total_requests);
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
    const ModelInfo& info = backend->info();
    json elig = eligibility(info);
    report["models"].push_back(json{{"name", spec.name},
                                    {"scale", info.scale},
                                    {"evidence_grade", info.evidence},
                                    {"real_weights", info.real_weights},
                                    {"sample_rate", info.sample_rate},
                                    {"frame_rate", info.frame_rate},
                                    {"can_encode_batch", info.can_encode_batch},
                                    {"has_internal_batching", info.has_internal_batching},
                                    {"eligibility", elig},
                                    {"encoder",
                                     {{"scale", spec.encoder.scale}, {"dtype", spec.encoder.dtype},
                                      {"device", spec.encoder.device}, {"module", spec.encoder.module_path},
                                      {"threads", spec.encoder.threads}}},
                                    {"synthesis", synthesis_json(spec.synthesis)}});
    std::vector<ArmSpec> arms;
    for (const ArmSpec& arm : manifest.arms) {
      if (arm.name == "m4b" && !elig["eligible"].get<bool>()) {
        report["skipped"].push_back(json{{"model", spec.name}, {"arm", "m4b"}, {"reason", elig["reason"]}});
        for (const auto& ph : manifest.phases) {
          std::size_t n = ph.concurrency.size() * static_cast<std::size_t>(manifest.repeats);
          total_cells -= n;
          progress.add(n * static_cast<std::size_t>(ph.requests));
        }
        continue;
      }
      arms.push_back(arm);
    }

    for (const PhaseSpec& phase : manifest.phases) {
      std::vector<WorkItem> items(static_cast<std::size_t>(phase.requests));
      for (int i = 0; i < phase.requests; ++i)
        items[static_cast<std::size_t>(i)] = work_item(static_cast<std::size_t>(i), static_cast<std::size_t>(i % phase.distinct));
      std::vector<WorkItem> distinct(items.begin(), items.begin() + phase.distinct);
      std::vector<WorkItem> warmup;
      for (int w = 0; w < manifest.references.warmup; ++w)
        warmup.push_back(work_item(static_cast<std::size_t>(w), static_cast<std::size_t>(measured + w)));

      for (int conc : phase.concurrency) {
        for (int rep = 0; rep < manifest.repeats; ++rep) {
          for (const ArmSpec& arm : arms) {
            if (stopped()) break;
            CellKey key{spec.name, arm.name, to_string(phase.kind), conc, rep};
            progress.cell(key.id(), ++cell_index, total_cells);
            std::unique_ptr<TempDir> tier_dir;
            std::unique_ptr<ServiceHandle> service;
            RunOptions setup{.concurrency = conc, .stop = options.stop};
            if (phase.kind == PhaseKind::warm_disk) {
              tier_dir = std::make_unique<TempDir>(options.tmp_root);
              auto writer = backend->make_service(arm, manifest.cache, tier_dir->path);
              run_requests(*writer, distinct, setup, nullptr, info.frame_rate);
              writer.reset();
              service = backend->make_service(arm, manifest.cache, tier_dir->path);
            } else {
              service = backend->make_service(arm, manifest.cache, "");
              if (phase.kind == PhaseKind::warm) run_requests(*service, distinct, setup, nullptr, info.frame_rate);
            }
            if (!warmup.empty()) {
              RunOptions wo{.concurrency = std::min<int>(conc, static_cast<int>(warmup.size())), .stop = options.stop};
              run_requests(*service, warmup, wo, nullptr, info.frame_rate);
            }
            SynthesisModel synth(spec.synthesis, options.sleep_synthesis);
            RunOptions ro{.concurrency = conc,
                          .open_loop = manifest.arrivals.open_loop,
                          .rate_per_s = manifest.arrivals.rate_per_s,
                          .seed = manifest.seed + static_cast<std::uint64_t>(rep),
                          .stop = options.stop,
                          .on_done = [&](std::size_t) { progress.add(1); }};
            ServiceStats before = service->stats();
            TelemetrySampler telemetry;
            RunResult run = run_requests(*service, items, ro, &synth, info.frame_rate);
            TelemetrySummary tel = telemetry.stop();
            ServiceStats delta = service->stats().minus(before);
            bool batching = service->batching();
            service.reset();
            if (run.records.empty() && stopped()) break;
            report["cells"].push_back(cell_json(key, run, delta, tel, manifest.arrivals.open_loop, batching));
            result.requests[key.id()] = std::move(run.records);
          }
        }
      }
    }
  }
  progress.finish();
  result.interrupted = stopped();
  report["status"] = result.interrupted ? "interrupted" : "complete";
  report["wall_s"] = std::chrono::duration<double>(Clock::now() - t_start).count();
  report["context"]["encoders"] = json::array();
  for (const json& m : report["models"])
    report["context"]["encoders"].push_back(
        {{"model", m["name"]}, {"scale", m["scale"]}, {"real_weights", m["real_weights"]}, {"evidence", m["evidence_grade"]}});
  try {
    report["context"]["libtorch"] = torch_context();  // thread settings as the encoders left them
  } catch (const std::exception&) {
  }
  GateOptions go = gate_options_from_report(report);
  result.gate = evaluate_gate(report, result.requests, go);
  report["gate"] = result.gate.json;
  result.report = std::move(report);
  write_run(options.out_dir, result.report, result.requests);
  return result;
}

}  // namespace refenc::profile
