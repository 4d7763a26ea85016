// `refenc encode CLIP --model NAME ...`: encode one reference clip through the cached service and
// report its key, artifact shapes, where it came from and a timing breakdown. The disk cache under the
// default root is used unless --no-cache; processes encoding the same clip at once encode it once.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "util/atomic_file.hpp"
#include "core/error.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/prompt_form.hpp"
#include "shared_cache.hpp"
#include "store/disk_tier.hpp"
#include "store/entry_format.hpp"
#include "store/tier_chain.hpp"

namespace refenc::cli {

namespace {

struct EncodeOptions {
  std::string clip, model, text, scale, dtype = "float32", device = "cpu", module, checkpoint, out, prompt, cache_dir;
  bool x_vector_only = false, json = false, no_cache = false;
  int threads = 0, repeat = 1;
  SharedCacheOptions shared;
};

/// Seconds since this process started (dynamic loading of LibTorch and the other libraries included),
/// from /proc; 0 where unavailable. Resolution: one clock tick (10 ms).
double process_age() {
  std::ifstream stat("/proc/self/stat"), up("/proc/uptime");
  std::string line;
  double uptime = 0;
  if (!std::getline(stat, line) || !(up >> uptime)) return 0;
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return std::max(0.0, uptime - std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK)));
  }
  return 0;
}

double seconds_between(RequestTrace::Clock::time_point a, RequestTrace::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string where(RequestOutcome o) {
  switch (o) {
    case RequestOutcome::hit: return "memory";
    case RequestOutcome::disk_hit: return "disk";
    case RequestOutcome::shared_hit: return "shared";
    case RequestOutcome::encoded: return "encoded";
    case RequestOutcome::uncacheable: return "encoded (uncacheable)";
    default: return std::string(to_string(o));
  }
}

/// The artifact as JSON: meta, and per tensor its dtype, shape and flat values.
nlohmann::json artifact_json(const Artifact& a) {
  nlohmann::json j = {{"meta", a.meta}, {"tensors", nlohmann::json::object()}};
  for (const auto& [name, t] : a.tensors) {
    nlohmann::json v;
    if (t.dtype() == DType::float32) {
      auto s = t.values<float>();
      v = std::vector<float>(s.begin(), s.end());
    } else {
      const HostTensor wide = t.to(DType::int64);
      auto s = wide.values<std::int64_t>();
      v = std::vector<std::int64_t>(s.begin(), s.end());
    }
    j["tensors"][name] = {{"dtype", std::string(to_string(t.dtype()))}, {"shape", t.shape()}, {"values", v}};
  }
  return j;
}

enum class OutFormat { none, pt, json, npy };

/// The format `--out PATH` asks for, from its extension; Error(bad_input) for any other.
OutFormat out_format(const std::string& path) {
  if (path.empty()) return OutFormat::none;
  std::string ext = std::filesystem::path(path).extension().string();
  std::string lower = ext;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == ".pt") return OutFormat::pt;
  if (lower == ".json") return OutFormat::json;
  if (lower == ".npy") return OutFormat::npy;
  throw Error(ErrorKind::bad_input,
              path + ": " + (ext.empty() ? std::string("no extension") : "unknown extension '" + ext + "'") +
                  " for --out (use .pt for a torch archive, .json, or .npy for a one-tensor artifact)");
}

int run_encode(const EncodeOptions& o) {
  using Clock = std::chrono::steady_clock;
  const OutFormat format = out_format(o.out);  // before any work
  if (format == OutFormat::npy && encoders::model_info(o.model).artifact.size() != 1)
    throw Error(ErrorKind::bad_input, o.out + ": .npy holds one tensor and " + o.model + "'s artifact has " +
                                          std::to_string(encoders::model_info(o.model).artifact.size()) +
                                          " (use .pt or .json)");
  if (!o.prompt.empty()) {  // before any work: the file must be the form the model's tools read
    const encoders::PromptForm& form = encoders::prompt_form(o.model);
    if (std::filesystem::path(o.prompt).extension().string() != form.extension)
      throw Error(ErrorKind::bad_input, o.prompt + ": " + o.model + "'s prompt form is a " + form.extension +
                                            " file (" + form.description + ")");
    if (o.model == "qwen3-tts" && !o.x_vector_only && o.text.empty())
      throw Error(ErrorKind::bad_input, o.prompt + ": a qwen3-tts voice-clone prompt in ICL mode needs the reference "
                                                   "text (--text), or use --x-vector-only");
  }
  const double startup = process_age();
  const auto t0 = Clock::now();
  std::shared_ptr<store::RedisTier> shared = open_shared_cache(o.shared);  // a bad URL fails before any work
  const double torch_init = encoders::warm_up_torch();
  const std::string scale = network_scale(o.scale, o.checkpoint);
  encoders::EncoderOptions eo{.scale = scale,
                              .dtype = o.dtype,
                              .device = o.device,
                              .module_path = o.module,
                              .checkpoint = o.checkpoint,
                              .threads = o.threads};
  std::shared_ptr<encoders::ModelHook> hook = encoders::make_hook(o.model, eo);
  const double build = std::chrono::duration<double>(Clock::now() - t0).count() - torch_init;

  std::shared_ptr<store::DiskTier> disk;
  if (!o.no_cache) disk = store::open_disk_tier({.root = o.cache_dir});  // empty: the default root
  std::shared_ptr<SecondTier<Artifact>> tier = disk;
  if (shared) tier = std::make_shared<store::TierChain>(disk, shared);
  encoders::EncodeService service(hook, {.max_bytes = 1u << 30}, tier);
  encoders::EncodeRequest req{audio::ReferenceSource::parse(o.clip), o.text, o.x_vector_only};

  nlohmann::json runs = nlohmann::json::array();
  Artifact artifact;
  encoders::LoadSummary load;
  std::optional<ReferenceEncodeKey> key;
  for (int i = 0; i < o.repeat; ++i) {
    RequestTrace trace;
    artifact = service.get_or_encode(req, {}, &trace);  // audio errors already name the clip
    load = hook->last_load();  // every request decodes: the key is a digest of the decoded input
    runs.push_back(
        {{"from", where(trace.outcome)},
         {"decode_s", load.timings.read + load.timings.key + load.timings.decode},
         {"resample_s", load.timings.resample},
         {"normalize_s", load.timings.normalize},
         {"load_total_s", seconds_between(trace.start, trace.normalized)},
         {"encode_s",
          trace.outcome == RequestOutcome::hit ? 0.0 : seconds_between(trace.encode_start, trace.encode_end)},
         {"total_s", seconds_between(trace.start, trace.end)}});
    key = trace.key;
  }
  if (format == OutFormat::json) write_file_atomic(o.out, artifact_json(artifact).dump() + "\n");
  if (format == OutFormat::npy) write_file_atomic(o.out, encoders::npy_bytes(artifact.tensors.begin()->second));
  if (!o.prompt.empty()) write_file_atomic(o.prompt, encoders::prompt_bytes(o.model, artifact));
  if (format == OutFormat::pt) {  // the disk entry's bytes: torch.load(weights_only=True) opens it
    const std::vector<char> entry =
        store::encode_entry(key ? key->canonical() : std::string(), hook->store_artifact(artifact));
    write_file_atomic(o.out, std::string(entry.begin(), entry.end()));
  }

  nlohmann::json j;
  j["model"] = o.model;
  j["config"] = {{"scale", o.module.empty() ? scale : "module"},
                 {"weights", hook->config().checkpoint.empty() ? (o.module.empty() ? "seeded proxy" : "module")
                                                                : "checkpoint"},
                 {"checkpoint", hook->config().checkpoint},
                 {"dtype", o.dtype},
                 {"device", o.device},
                 {"parameters", hook->config().parameters},
                 {"config_hash", hook->config().config_hash},
                 {"config", nlohmann::json::parse(hook->config().config_json)}};
  j["key"] = key ? nlohmann::json{{"digest", key->digest()}, {"fields", nlohmann::json::parse(key->canonical())}}
                 : nlohmann::json(nullptr);
  j["audio"] = {{"seconds", load.seconds},
                {"samples", load.samples},
                {"sample_rate", load.sample_rate},
                {"source_rate", load.source_rate},
                {"source_channels", load.source_channels},
                {"source_format", load.source_format},
                {"gain_db", load.gain_db}};
  for (const auto& [name, t] : artifact.tensors)
    j["artifact"]["tensors"][name] = {{"dtype", std::string(to_string(t.dtype()))}, {"shape", t.shape()}};
  j["artifact"]["meta"] = artifact.meta;
  j["artifact"]["stored_bytes"] = hook->stored_bytes(hook->store_artifact(artifact));
  j["timings_s"] = {{"process_start", startup}, {"first_torch_call", torch_init}, {"build_network", build}};
  j["runs"] = runs;
  j["cache"] =
      disk ? nlohmann::json{{"root", disk->root().string()}, {"enabled", disk->enabled()}} : nlohmann::json(nullptr);
  if (disk) {
    const store::DiskLockStats l = disk->lock_stats();
    j["cache"]["lock"] = {{"leases", l.leases},
                          {"lock_waits", l.lock_waits},
                          {"lock_wait_hits", l.lock_wait_hits},
                          {"lock_takeovers", l.lock_takeovers},
                          {"lock_timeouts", l.lock_timeouts}};
  }
  if (!o.out.empty()) j["out"] = o.out;
  if (!o.prompt.empty()) j["prompt"] = o.prompt;

  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("model      {} (scale {}, {}, {}, {} parameters)\n", o.model,
                           o.module.empty() ? scale : "module", o.dtype, o.device, hook->config().parameters);
  if (!hook->config().checkpoint.empty())
    std::cout << fmt::format("weights    checkpoint {} (revision {})\n", hook->config().checkpoint,
                             hook->config().model_revision);
  if (key) {
    std::cout << fmt::format("key        {}\n", key->digest());
    std::cout << fmt::format("  model_id {}  revision {}  encoder {}\n", key->model_id, key->model_revision,
                             key->encoder_id);
    std::cout << fmt::format("  config   {}\n  kind     {}\n  input    {}\n  options  {}\n", key->encoder_config_hash,
                             key->artifact_kind, key->input_key, key->options_key.empty() ? "-" : key->options_key);
  } else {
    std::cout << "key        none (uncacheable source)\n";
  }
  std::cout << fmt::format("audio      {:.3f} s, {} samples at {} Hz (source {} Hz, {} ch, {}), gain {:+.2f} dB\n",
                           load.seconds, load.samples, load.sample_rate, load.source_rate, load.source_channels,
                           load.source_format, load.gain_db);
  for (const auto& [name, t] : artifact.tensors) std::cout << fmt::format("artifact   {} {}\n", name, t.describe());
  for (const auto& [k, v] : artifact.meta) std::cout << fmt::format("meta       {} = {}\n", k, v);
  std::cout << fmt::format("stored     {} bytes (int16 codes)\n", j["artifact"]["stored_bytes"].get<std::size_t>());
  std::cout << fmt::format(
      "timing     load libraries {:.2f} s (process start to command), first LibTorch call {:.3f} s, "
      "build network {:.3f} s\n",
      startup, torch_init, build);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    std::cout << fmt::format(
        "request {}  from {}: decode {:.4f} s, resample {:.4f} s, normalize {:.4f} s, encode {:.4f} s, total {:.4f} "
        "s\n",
        i + 1, r["from"].get<std::string>(), r["decode_s"].get<double>(), r["resample_s"].get<double>(),
        r["normalize_s"].get<double>(), r["encode_s"].get<double>(), r["total_s"].get<double>());
  }
  if (disk && disk->lock_stats().lock_waits) {
    const store::DiskLockStats l = disk->lock_stats();
    std::cout << fmt::format("cache      waited for another process encoding this key: {}\n",
                             l.lock_wait_hits   ? "read its entry"
                             : l.lock_takeovers ? "it stopped without an entry, encoded here"
                                                : "gave up waiting, encoded here");
  }
  if (format == OutFormat::json)
    std::cout << fmt::format("wrote      {} (JSON: meta, tensors with dtype, shape, values)\n", o.out);
  if (format == OutFormat::pt)
    std::cout << fmt::format("wrote      {} (torch archive: dict of format, key, tensors, meta, checksum)\n", o.out);
  if (!o.prompt.empty())
    std::cout << fmt::format("wrote      {} ({})\n", o.prompt, encoders::prompt_form(o.model).description);
  return 0;
}

Registration encode_command{
    "encode", "Encode one reference clip and show its key, artifact and timings", [](CLI::App& app) {
      auto o = std::make_shared<EncodeOptions>();
      app.add_option("clip", o->clip, "Reference clip: a path, a data: URI or an http(s) URL")->required();
      app.add_option("--model", o->model, "fish-s2-pro, qwen3-tts or moss-tts-local")->required();
      app.add_option("--text", o->text, "Reference text (read by qwen3-tts only)");
      app.add_flag("--x-vector-only", o->x_vector_only, "qwen3-tts: speaker embedding only, no ref_code");
      app.add_option("--scale", o->scale, kScaleHelp);
      app.add_option("--dtype", o->dtype, "float32 or bfloat16")->capture_default_str();
      app.add_option("--device", o->device, "cpu or cuda:N")->capture_default_str();
      auto* module = app.add_option("--module", o->module, "TorchScript module replacing the proxy network");
      app.add_option("--checkpoint", o->checkpoint, kCheckpointHelp)->excludes(module);
      app.add_option("--threads", o->threads, "LibTorch intra-op threads (0: LibTorch's default)");
      app.add_option("--repeat", o->repeat, "Request the clip N times through one service (later ones hit memory)")
          ->check(CLI::Range(1, 1000));
      auto* cache_dir = app.add_option("--cache-dir", o->cache_dir,
                                       "Disk cache root (default $REFENC_CACHE_DIR, $XDG_CACHE_HOME/refenc, "
                                       "~/.cache/refenc); a later run reports 'disk'");
      app.add_flag("--no-cache", o->no_cache, "Use no disk cache (read none, write none)")->excludes(cache_dir);
      app.add_option("--out", o->out,
                     "Write the artifact: FILE.pt a torch archive (torch.load(FILE, weights_only=True)), FILE.json "
                     "JSON (meta; tensors with dtype, shape, values), FILE.npy the one tensor as NumPy reads it "
                     "(fish-speech's --prompt-tokens)");
      app.add_option("--prompt", o->prompt,
                     "Write the reference as the model's own tools read it: fish-s2-pro FILE.npy (fish-speech "
                     "--prompt-tokens), qwen3-tts FILE.pt (voice-clone prompt; ICL mode needs --text), "
                     "moss-tts-local FILE.jsonl ({\"ref_audio_codes\": ...})");
      add_shared_cache_options(app, o->shared);
      app.add_flag("--json", o->json, "Print the report as JSON");
      return [o] { return run_encode(*o); };
    }};

}  // namespace

}  // namespace refenc::cli
