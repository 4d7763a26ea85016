// `refenc calibrate`: measures an encoder network's cost surface on this machine (time per call over
// batch sizes and reference lengths, the per-call overhead fit, how concurrent calls share the device,
// peak memory) and writes a calibration file that a modelled device reads; `--preset NAME` writes a
// published preset instead. The measuring is profile/device/calibrator.hpp's; this file parses the
// options, loads the clips and the network, binds a timed call to the network and prints.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "audio/reference_loader.hpp"
#include "command.hpp"
#include "core/error.hpp"
#include "encoder_backend.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"
#include "profile/device/calibration_presets.hpp"
#include "profile/device/calibrator.hpp"
#include "profile/orchestration/run_context.hpp"

namespace refenc::cli {

namespace {

struct CalibrateOptions {
  std::string model;
  std::string scale;  ///< Empty: network_scale's default.
  std::string module_path;
  std::string checkpoint;
  std::string device = "cpu";
  std::string dtype = "float32";
  int threads = 0;
  int batch_max = 8;
  std::vector<double> lengths{2, 5, 10};
  int repeats = 3;
  std::vector<int> concurrency;
  std::vector<int> batch_concurrency;  ///< Empty: min(cores, the largest --concurrency); {0}: none.
  std::vector<std::string> clips;
  std::string out;
  std::string name;
  std::string preset;
};

using Clock = std::chrono::steady_clock;

/// A deterministic test clip: a few partials plus seeded noise, at `rate`.
std::vector<float> synthetic_clip(double seconds, int rate, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(seconds * rate));
  std::uint64_t s = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double noise = static_cast<double>(s >> 40) / static_cast<double>(1ull << 24) - 0.5;
    double t = static_cast<double>(i) / rate;
    x[i] = static_cast<float>(0.3 * std::sin(2 * M_PI * 180 * t) + 0.1 * std::sin(2 * M_PI * 720 * t) + 0.05 * noise);
  }
  return x;
}

/// Peak resident set of this process (VmHWM), bytes; 0 when unreadable.
std::uint64_t peak_rss() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// `seconds` of audio at `rate` from `decoded`, starting with clip `first` and going on through the
/// next ones (cyclically) until it is long enough.
std::vector<float> clip_from(const std::vector<std::vector<float>>& decoded, std::size_t first, double seconds,
                             int rate) {
  std::vector<float> x(static_cast<std::size_t>(seconds * rate));
  std::size_t filled = 0;
  for (std::size_t c = first; filled < x.size(); ++c) {
    const std::vector<float>& from = decoded[c % decoded.size()];
    const std::size_t n = std::min(from.size(), x.size() - filled);
    std::copy_n(from.begin(), n, x.begin() + static_cast<std::ptrdiff_t>(filled));
    filled += n;
  }
  return x;
}

/// The measured calibration's tables: times alone, the fit, and the sharing levels when measured.
void print_calibration(const profile::Calibration& c, int repeats) {
  std::cout << '\n' << fmt::format("  {:>6}", "batch");
  for (double l : c.lengths_s) std::cout << fmt::format(" {:>9}", fmt::format("{:g} s", l));
  std::cout << fmt::format("   (ms per call, median of {} rounds)\n", repeats);
  for (std::size_t b = 0; b < c.batch_sizes.size(); ++b) {
    std::cout << fmt::format("  {:>6}", c.batch_sizes[b]);
    for (double ms : c.time_ms[b]) std::cout << fmt::format(" {:>9.1f}", ms);
    std::cout << '\n';
  }
  std::cout << fmt::format("  fit (batch 1): {:.1f} ms per call + {:.1f} ms per second of reference\n", c.overhead_ms,
                           c.per_audio_second_ms);
  if (c.sharing.slowdown.empty()) return;
  auto print_row = [&](const std::string& label, const std::vector<double>& f, double spread) {
    std::cout << fmt::format("  {:>6}", label);
    for (double x : f) std::cout << fmt::format(" {:>9.2f}", x);
    std::cout << fmt::format(" {:>9.3f}\n", spread);
  };
  auto print_header = [&](const char* what) {
    std::cout << fmt::format("  {:>6}", "load");
    for (double l : c.lengths_s) std::cout << fmt::format(" {:>9}", fmt::format("{:g} s", l));
    std::cout << fmt::format(" {:>9}", "spread") << "   (" << what
              << ": mean latency under load / one caller's, median of " << repeats
              << " rounds; spread: sigma of ln latency within a length)\n";
  };
  std::cout << "  sharing, batch 1, lengths mixed (calls/s over one caller's):";
  for (const auto& [k, effective] : c.sharing.capacity) std::cout << fmt::format(" c{} {:.2f}x", k, effective);
  std::cout << '\n';
  print_header("slowdown");
  for (const profile::SlowdownLevel& s : c.sharing.slowdown)
    print_row(fmt::format("c{}", s.concurrency), s.factor, s.spread);
  if (!c.sharing.batch_slowdown.empty()) print_header("batch slowdown");
  for (const profile::BatchSlowdown& s : c.sharing.batch_slowdown)
    print_row(fmt::format("b{} c{}", s.batch, s.concurrency), s.factor, s.spread);
  std::cout << std::flush;
}

int write_preset(const CalibrateOptions& o) {
  const profile::Calibration* c = profile::find_calibration_preset(o.preset);
  if (!c) {
    std::string known;
    for (const auto& p : profile::calibration_presets()) known += (known.empty() ? "" : ", ") + p.name;
    throw Error(ErrorKind::bad_input, "--preset " + o.preset + ": unknown (known: " + known + ")");
  }
  profile::save_calibration(*c, o.out);
  std::cout << fmt::format("wrote {} (preset {}, {})\n", o.out, c->name, c->source);
  return 0;
}

int run_calibrate(const CalibrateOptions& o) {
  if (o.out.empty()) throw Error(ErrorKind::bad_input, "--out: required (the calibration file to write)");
  if (!o.preset.empty()) return write_preset(o);
  if (o.model.empty()) throw Error(ErrorKind::bad_input, "--model: required (or --preset NAME)");
  if (o.batch_max < 1 || o.batch_max > 64) throw Error(ErrorKind::bad_input, "--batch-max: must be 1..64");
  if (o.repeats < 1 || o.repeats > 100) throw Error(ErrorKind::bad_input, "--repeats: must be 1..100");
  for (int k : o.concurrency)
    if (k < 1 || k > 256) throw Error(ErrorKind::bad_input, "--concurrency: each level must be 1..256");
  for (int k : o.batch_concurrency)
    if ((k < 2 || k > 256) && !(k == 0 && o.batch_concurrency.size() == 1))
      throw Error(ErrorKind::bad_input, "--batch-concurrency: each level must be 2..256 (or 0 alone: none)");
  std::vector<double> lengths = o.lengths;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  if (lengths.empty() || lengths.front() <= 0 || lengths.back() > 600)
    throw Error(ErrorKind::bad_input, "--lengths: seconds in (0, 600]");

  const encoders::ModelInfo& info = encoders::model_info(o.model);
  encoders::EncoderOptions eo;
  const std::string scale = network_scale(o.scale, o.checkpoint);
  eo.scale = scale;
  eo.checkpoint = o.checkpoint;
  eo.dtype = o.dtype;
  eo.device = o.device;
  eo.module_path = o.module_path;
  eo.threads = o.threads;
  std::unique_ptr<encoders::Network> net = encoders::make_network(o.model, eo);
  // The content the network sees: the given clips decoded as the family's hook decodes them (real
  // speech has quiet stretches whose subnormal activations can cost a CPU far more than a steady tone).
  std::vector<std::vector<float>> decoded;
  std::string clip_names;
  for (const std::string& path : o.clips) {
    audio::LoadedReference r;
    try {
      r = audio::load_reference(audio::ReferenceSource::parse(path), encoders::reference_load_options(info));
    } catch (const Error& e) {
      throw Error(ErrorKind::bad_input, "--clips " + path + ": " + e.what());
    }
    if (r.samples.empty()) throw Error(ErrorKind::bad_input, "--clips " + path + ": no audio samples");
    decoded.push_back(std::move(r.samples));
    clip_names += (clip_names.empty() ? "" : ",") + path;
  }

  profile::Calibration c;
  c.model = info.name;
  c.origin = "measured";
  c.name = o.name.empty() ? fmt::format("{}-{}{}-{}", info.name, o.module_path.empty() ? scale : "module",
                                        o.checkpoint.empty() ? "" : "-checkpoint", o.device)
                          : o.name;
  profile::RunContext ctx = profile::make_context(profile::Manifest{});
  profile::LibraryContext lib = profile::torch_library_context();
  c.context.host = ctx.host;
  c.context.device = o.device;
  c.context.device_name = o.device == "cpu" ? ctx.cpu_model : o.device;
  c.context.libtorch = lib.version;
  const std::string& rev = net->config().model_revision;
  c.context.module_sha256 = rev.rfind("module:", 0) == 0 ? rev.substr(7) : "";
  c.context.scale = o.module_path.empty() ? scale : "";
  c.context.threads = encoders::torch_threads();
  c.context.date_utc = ctx.started_utc;
  c.batch_sizes = profile::batch_sizes_up_to(o.batch_max);
  c.lengths_s = lengths;
  c.context.cores = static_cast<int>(ctx.cores);
  // Batches under load: min(cores, the largest --concurrency) callers by default, as many as M4b's
  // matched batch workers on this host at that concurrency.
  const std::vector<int> batch_levels =
      profile::batch_levels(o.concurrency, o.batch_concurrency, ctx.cores, c.batch_sizes.size());
  auto list = [](const auto& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + fmt::format("{}", x);
    return out;
  };
  c.source = fmt::format(
      "refenc calibrate --model {} {} --device {} --threads {} --lengths {} --batch-max {} "
      "--repeats {}{}{}{} on {}",
      info.name,
      o.module_path.empty() ? "--scale " + scale + (o.checkpoint.empty() ? "" : " --checkpoint " + o.checkpoint)
                            : "--module " + o.module_path,
      o.device,
      c.context.threads, list(lengths), o.batch_max, o.repeats,
      o.concurrency.empty() ? "" : " --concurrency " + list(o.concurrency),
      o.concurrency.empty() ? "" : " --batch-concurrency " + (batch_levels.empty() ? "0" : list(batch_levels)),
      clip_names.empty() ? "" : " --clips " + clip_names, ctx.host);
  c.assumptions.push_back(
      "each time is the median of " + std::to_string(o.repeats) +
      " calls, one per round over the whole grid (odd rounds reversed; round r's batches start at clip slot r; "
      "each round followed by that round's sharing measurements) after one warm-up call per point, on " +
      (decoded.empty() ? std::string("seeded synthetic clips (partials plus noise) of the stated lengths")
                       : "the stated lengths cut from " + std::to_string(decoded.size()) +
                             " given clip(s), decoded as the model's hook decodes them, placed end to end"));

  // One clip per length and batch slot (distinct content).
  std::vector<std::vector<std::vector<float>>> clips(lengths.size());
  for (std::size_t l = 0; l < lengths.size(); ++l)
    for (int b = 0; b < o.batch_max; ++b) {
      const std::size_t slot = l * static_cast<std::size_t>(o.batch_max) + static_cast<std::size_t>(b);
      clips[l].push_back(decoded.empty()
                             ? synthetic_clip(lengths[l], info.sample_rate, 100 * l + static_cast<std::uint64_t>(b))
                             : clip_from(decoded, slot, lengths[l], info.sample_rate));
    }
  // A call of `t.batch` clips of length `t.length`, from slot `t.slot` on: the slot moves with every
  // round and call, so each point's samples cover every slot's content (its cost varies with the content).
  auto call = [&](const profile::TimedCall& t) {
    std::vector<encoders::NetworkItem> items;
    const std::size_t slots = static_cast<std::size_t>(o.batch_max);
    for (int b = 0; b < t.batch; ++b) items.push_back({clips[t.length][(t.slot + static_cast<std::size_t>(b)) % slots]});
    auto t0 = Clock::now();
    net->encode(items);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };

  std::cout << fmt::format("calibrating {} ({}) on {} [{}], {} intra-op threads\n", info.name,
                           !o.module_path.empty()  ? "module " + o.module_path
                           : o.checkpoint.empty() ? "proxy scale " + scale
                                                  : "checkpoint " + o.checkpoint + ", scale " + scale,
                           o.device,
                           c.context.device_name, c.context.threads);
  std::cout << fmt::format("  {} rounds of the grid{} ", o.repeats,
                           o.concurrency.empty() ? "" : " and the sharing levels")
            << std::flush;
  const profile::CalibrationPlan plan{.batch_sizes = c.batch_sizes,
                                      .lengths_s = lengths,
                                      .repeats = o.repeats,
                                      .concurrency = o.concurrency,
                                      .batch_levels = batch_levels};
  profile::measure_calibration(plan, call, c, {.on_round = [](int) { std::cout << '.' << std::flush; }});
  print_calibration(c, o.repeats);
  c.peak_memory_bytes = peak_rss();
  c.peak_memory_kind = c.peak_memory_bytes ? "rss" : "";
  if (o.device != "cpu")
    c.assumptions.push_back("peak memory is the host process's RSS: this build reads no device memory counters");
  std::cout << fmt::format("  peak memory: {:.1f} MiB ({})\n", c.peak_memory_bytes / 1048576.0,
                           c.peak_memory_kind.empty() ? "not read" : c.peak_memory_kind);
  profile::save_calibration(c, o.out);
  std::cout << fmt::format("wrote {}\n", o.out);
  return 0;
}

Registration calibrate_command{
    "calibrate", "Measure an encoder's cost surface for a modelled device", [](CLI::App& app) {
      auto o = std::make_shared<CalibrateOptions>();
      app.add_option("--model", o->model, "Encoder: fish-s2-pro, qwen3-tts, moss-tts-local");
      app.add_option("--scale", o->scale, kScaleHelp);
      auto* module = app.add_option("--module", o->module_path, "TorchScript module instead of the proxy");
      app.add_option("--checkpoint", o->checkpoint, kCheckpointHelp)->excludes(module);
      app.add_option("--device", o->device, "cpu or cuda:N")->capture_default_str();
      app.add_option("--dtype", o->dtype, "float32 or bfloat16")->capture_default_str();
      app.add_option("--threads", o->threads, "LibTorch intra-op threads (0: library default)");
      app.add_option("--batch-max", o->batch_max, "Largest batch (sizes 1, 2, 4, ... and this)")->capture_default_str();
      app.add_option("--lengths", o->lengths, "Reference lengths in seconds")->delimiter(',')->capture_default_str();
      app.add_option("--repeats", o->repeats,
                     "Rounds: each times every grid point once, then measures every sharing level (at least 8 calls "
                     "per length and level, every factor a ratio to one caller in the same round)")
          ->capture_default_str();
      app.add_option("--concurrency", o->concurrency,
                     "Concurrent callers for the sharing measurement (throughput and latency per length), "
                     "e.g. 2,4,8,16 (none: not measured)")
          ->delimiter(',');
      app.add_option("--batch-concurrency", o->batch_concurrency,
                     "Concurrent callers for batches under load, each batch size above 1 (default: min(cores, "
                     "the largest --concurrency), M4b's matched batch workers; 0: not measured)")
          ->delimiter(',');
      app.add_option("--clips", o->clips,
                     "Reference clips whose content the calibration encodes, cut to each length (default: "
                     "synthetic tones); real speech can cost a CPU more than a steady tone")
          ->delimiter(',');
      app.add_option("--name", o->name, "Calibration name (default MODEL-SCALE-DEVICE)");
      app.add_option("--preset", o->preset, "Write this published preset instead of measuring");
      app.add_option("--out", o->out, "Calibration file to write")->required();
      return [o] { return run_calibrate(*o); };
    }};

}  // namespace

}  // namespace refenc::cli
