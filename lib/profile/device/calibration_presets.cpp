#include "profile/device/calibration_presets.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace refenc::profile {
namespace {

/// Reference lengths of every preset's grid (seconds) and the length the published figure is taken at.
const std::vector<double> kLengths{3, 6, 10, 15, 20};
constexpr double kPublishedAt = 10;
const std::vector<int> kBatches{1, 2, 4, 8, 16};

struct Shape {
  double fixed_share;     ///< Share of the published time that does not grow with the length.
  double per_extra_item;  ///< A batch of B costs (1 + per_extra_item * (B - 1)) single calls.
};

/// A preset whose single call at kPublishedAt seconds costs `ms`, shaped by `shape`.
Calibration make(std::string name, std::string model, std::string device, std::string device_name, double ms,
                 Shape shape, std::string source, std::vector<std::string> assumptions) {
  Calibration c;
  c.name = std::move(name);
  c.model = std::move(model);
  c.origin = "published";
  c.source = std::move(source);
  c.assumptions = std::move(assumptions);
  c.context.host = "published";
  c.context.device = std::move(device);
  c.context.device_name = std::move(device_name);
  c.context.date_utc = "2026-12-03";
  c.batch_sizes = kBatches;
  c.lengths_s = kLengths;
  const double fixed = ms * shape.fixed_share;
  const double per_s = ms * (1 - shape.fixed_share) / kPublishedAt;
  for (int b : kBatches) {
    std::vector<double> row;
    for (double l : kLengths) row.push_back((fixed + per_s * l) * (1 + shape.per_extra_item * (b - 1)));
    c.time_ms.push_back(std::move(row));
  }
  c.overhead_ms = fixed;
  c.per_audio_second_ms = per_s;
  return c;
}

const std::string kLengthAssumption =
    "the published figure is taken as one call on a 10 s reference (the sources do not state the length)";
const std::string kGpuShape =
    "GPU: half of the call is fixed overhead (launches, transfers), half grows linearly with the length; "
    "a batch of B costs 1 + 0.1 (B - 1) single calls (not published: reference encoders leave a datacenter GPU "
    "mostly idle at batch 1)";
const std::string kCpuShape =
    "CPU: 10% of the call is fixed, 90% grows linearly with the length; a batch of B costs 1 + 0.9 (B - 1) single "
    "calls (not published: compute-bound on CPU, little batching gain)";

}  // namespace

const std::vector<Calibration>& calibration_presets() {
  static const std::vector<Calibration> all = [] {
    std::vector<Calibration> v;
    v.push_back(make("qwen3-tts-gpu", "qwen3-tts", "gpu", "H200-class GPU (published)", 10, {0.5, 0.1},
                     "Qwen3-TTS reference encode about 10 ms on a GPU (sglang-omni PR #2172)",
                     {kLengthAssumption, kGpuShape, "one GPU stream, calls first come first served"}));
    v.push_back(make("qwen3-tts-gpu-loaded", "qwen3-tts", "gpu", "H200-class GPU inside a loaded server (published)",
                     45, {0.5, 0.1},
                     "Qwen3-TTS reference encode 38-53 ms inside a loaded server (sglang-omni PR #2172); 45 ms used",
                     {kLengthAssumption, kGpuShape,
                      "the loaded figure includes the server's contention; the midpoint of 38-53 ms is used"}));
    v.push_back(make("moss-tts-local-gpu", "moss-tts-local", "gpu", "H200-class GPU (published)", 250, {0.5, 0.1},
                     "MOSS-TTS reference encode about 0.25 s on a GPU (sglang-omni #743)",
                     {kLengthAssumption, kGpuShape, "one GPU stream, calls first come first served"}));
    v.push_back(make("moss-tts-local-cpu", "moss-tts-local", "cpu", "server CPU (published)", 1500, {0.1, 0.9},
                     "MOSS-TTS reference encode 1-2 s on CPU (vllm-omni #7724); 1.5 s used",
                     {kLengthAssumption, kCpuShape, "the midpoint of 1-2 s is used",
                      "one call at a time using every core (matched threads)"}));
    v.push_back(make("fish-s2-pro-cpu", "fish-s2-pro", "cpu", "server CPU (published)", 900, {0.1, 0.9},
                     "Fish S2-Pro codec encode about 0.9 s on CPU in production (sglang-omni #1047)",
                     {kLengthAssumption, kCpuShape, "one call at a time using every core (matched threads)"}));
    return v;
  }();
  return all;
}

const Calibration* find_calibration_preset(std::string_view name) {
  for (const Calibration& c : calibration_presets())
    if (c.name == name) return &c;
  return nullptr;
}

Calibration resolve_calibration(const std::string& name_or_path, const std::string& base_dir) {
  if (const Calibration* p = find_calibration_preset(name_or_path)) return *p;
  std::filesystem::path p = name_or_path;
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  if (!std::filesystem::is_regular_file(p)) {
    std::string known;
    for (const Calibration& c : calibration_presets()) known += (known.empty() ? "" : ", ") + c.name;
    throw Error(ErrorKind::bad_input,
                "calibration '" + name_or_path + "': neither a preset (" + known + ") nor a file (" + p.string() + ")");
  }
  return load_calibration(p.lexically_normal().string());
}

void check_modelled_encoder(const std::string& model, EncoderSpec& encoder, const std::string& base_dir) {
  if (encoder.device != "modelled") {
    if (!encoder.calibration.empty())
      throw Error(ErrorKind::bad_input,
                  "a calibration is read only with device \"modelled\" (device is \"" + encoder.device + "\")");
    return;
  }
  if (encoder.calibration.empty())
    throw Error(ErrorKind::bad_input, "device \"modelled\" needs a \"calibration\" (a preset name or a file)");
  Calibration c = resolve_calibration(encoder.calibration, base_dir);
  if (c.model != model)
    throw Error(ErrorKind::bad_input, "calibration '" + encoder.calibration + "' is for " + c.model + ", not " + model);
  if (!c.path.empty()) encoder.calibration = c.path;
}

const std::vector<SynthesisPreset>& synthesis_presets() {
  static const std::vector<SynthesisPreset> all = [] {
    SynthesisPreset fish;
    fish.name = "fish-s2-pro-h200";
    fish.description = "Fish S2-Pro on one H200, calibrated to sglang-omni PR #996";
    SynthesisSpec& s = fish.spec;
    s.source =
        "calibrated to sglang-omni PR #996 (Fish S2-Pro, one H200): reference-encode p95 8257 ms of E2E p95 12.14 s "
        "at c=8; 8407 ms of 14.30 s and 1.25 req/s at c=16. Synthesis time taken as E2E p95 minus reference-encode "
        "p95 (3.88 s at c=8, 5.89 s at c=16), with the engine's occupancy by Little's law (c x synthesis share: "
        "2.6 active at c=8, 6.6 at c=16). Assumed, not published: each request generates 10 s of audio (216 steps at "
        "21.53 steps/s; texts of ~125 tokens at 4 chars per token) and a 50 ms prefill; solving the two points gives "
        "14.0 ms per step plus 2.33 ms per further active request.";
    s.prefill_base_ms = 50;
    s.prefill_per_ref_frame_ms = 0;
    s.prefill_per_text_token_ms = 0;
    s.step_base_ms = 14.0;
    s.step_per_active_ms = 2.33;
    s.steps_to_first_audio = 10;
    s.steps_per_audio_second = 21.53;
    s.audio_seconds_per_text_token = 0.08;
    s.chars_per_text_token = 4;
    return std::vector<SynthesisPreset>{fish};
  }();
  return all;
}

SynthesisSpec synthesis_preset(std::string_view name) {
  std::string known;
  for (const SynthesisPreset& p : synthesis_presets()) {
    if (p.name == name) return p.spec;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error(ErrorKind::bad_input, "synthesis preset '" + std::string(name) + "': unknown (known: " + known + ")");
}

}  // namespace refenc::profile
