// Manifest: a profiling workload read from JSON (schema in reports/manifest.md), validated field by field.
//
// Every violation is an Error(bad_input) whose message names the file and the JSON path of the field,
// e.g. "workloads/x.json: phases[1].concurrency[0]: must be >= 1".
//
//   refenc::profile::Manifest m = refenc::profile::load_manifest("workloads/nightly.json");
//   for (const auto& model : m.models) model.encoder.scale;
//   m.phases[0].kind == refenc::profile::PhaseKind::cold;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace refenc::profile {

/// Encoder construction options passed to the model's hook factory.
struct EncoderSpec {
  std::string scale = "tiny";     ///< Proxy size: "full", "small" or "tiny" (the encoders' scales).
  std::string dtype = "float32";
  std::string device = "cpu";
  std::string module_path;        ///< A real exported module; empty = seeded proxy weights.
  int threads = 0;                ///< Intra-op threads; 0 = the library default.
};

/// Parameters of the modelled synthesis engine (continuous batching, off the CPU), with their source.
struct SynthesisSpec {
  std::string source;                      ///< Where the numbers come from (required, non-empty).
  double prefill_base_ms = 10;             ///< Fixed prefill cost.
  double prefill_per_ref_frame_ms = 0.05;  ///< Per reference code frame in the prompt.
  double prefill_per_text_token_ms = 0.05; ///< Per text token.
  double step_base_ms = 15;                ///< One decode step with a single active request.
  double step_per_active_ms = 0.5;         ///< Added per further active request in the engine.
  int steps_to_first_audio = 8;            ///< Decode steps before the first audio chunk.
  double steps_per_audio_second = 21.5;    ///< Decode steps per second of generated audio.
  double audio_seconds_per_text_token = 0.08;  ///< Generated audio per text token.
  double chars_per_text_token = 4;         ///< Tokenizer model: UTF-8 bytes per text token.
};

struct ModelSpec {
  std::string name;  ///< Encoder registry name: fish-s2-pro, qwen3-tts, moss-tts-local, or a test name.
  EncoderSpec encoder;
  SynthesisSpec synthesis;
};

enum class PhaseKind { cold, warm, warm_disk };
std::string to_string(PhaseKind kind);

struct PhaseSpec {
  PhaseKind kind = PhaseKind::cold;
  std::vector<int> concurrency;  ///< Concurrency levels (each >= 1).
  int requests = 32;             ///< Measured requests per cell.
  int distinct = 0;              ///< Distinct references among them (requests cycle over them).
};

struct ArmSpec {
  std::string name = "m4a";          ///< "m4a" or "m4b".
  int max_batch_size = 1;            ///< m4b only (>= 2).
  double max_batch_wait_ms = 0;      ///< m4b only (>= 0).
};

struct ArrivalSpec {
  bool open_loop = false;            ///< false: closed loop with `concurrency` workers.
  double rate_per_s = 0;             ///< Open loop: Poisson arrival rate (> 0).
};

struct ReferenceSpec {
  std::vector<std::string> clips;    ///< Clip paths, resolved against the manifest's folder.
  int variants = 0;                  ///< Distinct derived variants (0 = the clips themselves).
  double variant_gain_db = 0.5;      ///< Largest seeded gain change of a variant.
  int warmup = 2;                    ///< Warmup requests per cell, from references outside the measured set.
};

struct GateSpec {
  double latency_reduction = 0.15;   ///< M4b p95 E2E at least this much lower ...
  double throughput_gain = 0.20;     ///< ... or throughput at least this much higher.
  int bootstrap_resamples = 2000;
  double confidence = 0.95;
};

struct CacheSpec {
  std::size_t max_items = 4096;
  std::size_t max_bytes = std::size_t(512) << 20;
};

struct Manifest {
  std::string path;                  ///< As given to load_manifest.
  std::string sha256;                ///< Digest of the file's bytes.
  std::string name;
  std::uint64_t seed = 1;
  std::vector<ModelSpec> models;
  ReferenceSpec references;
  std::vector<std::string> texts;
  std::vector<PhaseSpec> phases;
  std::vector<ArmSpec> arms;
  int repeats = 1;
  ArrivalSpec arrivals;
  GateSpec gate;
  CacheSpec cache;
  nlohmann::json raw;                ///< The manifest as parsed (kept in the report).

  /// Measured references needed: the largest `distinct` of any phase.
  int measured_references() const;
};

/// Parses and validates a manifest. `path` names it in errors and resolves clip paths.
Manifest parse_manifest(const nlohmann::json& j, const std::string& path);

/// Reads, parses and validates a manifest file. Throws Error(bad_input) naming the file and field.
Manifest load_manifest(const std::string& path);

}  // namespace refenc::profile
