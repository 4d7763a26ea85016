// The parts of a workload manifest that a run record carries: each model's encoder options and
// modelled-synthesis parameters, the gate's thresholds, and the default concurrency levels. Defaults
// are stated here once; the manifest parser and the report reader both use them.
//
//   GateSpec g;                 // 15% p95 reduction or 20% throughput gain, 2000 resamples, 95%
//   GateOptions o{g, 20261202}; // what the gate runs with: the spec and the run's seed
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace refenc::profile {

/// Encoder construction options passed to the model's hook factory.
struct EncoderSpec {
  std::string scale = "tiny";  ///< Proxy size: "full", "small" or "tiny" (the encoders' scales).
  std::string dtype = "float32";
  std::string device = "cpu";  ///< "cpu", "cuda:N", or "modelled" (a modelled device: see calibration).
  std::string module_path;     ///< A real exported module; empty = seeded proxy weights.
  std::string checkpoint;      ///< A published checkpoint loaded into the real network; empty = none.
  /// With device "modelled": a calibration preset's name or a calibration file (resolved against the
  /// manifest's folder); empty otherwise.
  std::string calibration;
  int threads = 0;  ///< Intra-op threads; 0 = the library default.
  /// Largest |batched - single| a float tensor may show for M4b parity (0 = bit-exact required).
  double parity_tolerance = 0;
  /// A Python hook instead of refenc's encoder: "module:factory", called with python_args as keyword
  /// arguments in an interpreter embedded in refenc (docs/python.md); empty otherwise.
  std::string python;
  std::vector<std::string> python_path;  ///< Folders put first on sys.path, absolute.
  std::string python_args = "{}";        ///< The factory's keyword arguments: a JSON object's text.
};

/// Parameters of the modelled synthesis engine (continuous batching, off the CPU), with their source.
struct SynthesisSpec {
  std::string source;                          ///< Where the numbers come from (required, non-empty).
  double prefill_base_ms = 10;                 ///< Fixed prefill cost.
  double prefill_per_ref_frame_ms = 0.05;      ///< Per reference code frame in the prompt.
  double prefill_per_text_token_ms = 0.05;     ///< Per text token.
  double step_base_ms = 15;                    ///< One decode step with a single active request.
  double step_per_active_ms = 0.5;             ///< Added per further active request in the engine.
  int steps_to_first_audio = 8;                ///< Decode steps before the first audio chunk.
  double steps_per_audio_second = 21.5;        ///< Decode steps per second of generated audio.
  double audio_seconds_per_text_token = 0.08;  ///< Generated audio per text token.
  double chars_per_text_token = 4;             ///< Tokenizer model: UTF-8 bytes per text token.
};

/// The gate's rule parameters (a manifest's "gate" block).
struct GateSpec {
  double latency_reduction = 0.15;  ///< M4b p95 E2E at least this much lower ...
  double throughput_gain = 0.20;    ///< ... or throughput at least this much higher,
  int bootstrap_resamples = 2000;   ///< judged on the lower bound of a percentile-bootstrap interval
  double confidence = 0.95;         ///< at this level.
};

/// What the gate runs with: the spec and the run's seed (the bootstrap's seed derives from it).
struct GateOptions {
  GateSpec spec;
  std::uint64_t seed = 1;
};

/// Concurrency levels of a phase when neither the phase nor the manifest names any.
inline const std::vector<int>& default_concurrency_levels() {
  static const std::vector<int> levels{8, 16};
  return levels;
}

}  // namespace refenc::profile
