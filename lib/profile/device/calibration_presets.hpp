// Calibration presets: cost surfaces built from published figures (each citing its source, stating
// what is assumed), for modelled devices the project cannot measure here (a datacenter GPU), and
// modelled-synthesis presets calibrated the same way. A manifest names one instead of a file:
// `"encoder": {"device": "modelled", "calibration": "qwen3-tts-gpu"}`, `"synthesis": {"preset": ...}`.
//
//   for (const auto& c : refenc::profile::calibration_presets()) std::cout << c.name << ": " << c.source;
//   refenc::profile::Calibration c = refenc::profile::resolve_calibration("fish-s2-pro-cpu", "workloads");
//   refenc::profile::SynthesisSpec s = refenc::profile::synthesis_preset("fish-s2-pro-h200");
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profile/record/calibration.hpp"
#include "profile/record/workload_specs.hpp"

namespace refenc::profile {

/// The encoder presets (origin "published"), in a fixed order.
const std::vector<Calibration>& calibration_presets();

/// The preset named `name`, or null.
const Calibration* find_calibration_preset(std::string_view name);

/// A preset by name, else a calibration file (relative paths resolved against `base_dir`); throws
/// Error(bad_input) naming the file or listing the presets.
Calibration resolve_calibration(const std::string& name_or_path, const std::string& base_dir);

/// Checks an encoder spec's device and calibration: with device "modelled" the calibration must name a
/// preset or a readable calibration file (a relative path is resolved against `base_dir` and replaced
/// by the resolved path) for encoder `model`; without it, no calibration may be given. Throws
/// Error(bad_input).
void check_modelled_encoder(const std::string& model, EncoderSpec& encoder, const std::string& base_dir);

/// A named modelled-synthesis preset with its description.
struct SynthesisPreset {
  std::string name;
  std::string description;
  SynthesisSpec spec;  ///< spec.source cites the figures and states the assumptions.
};

/// The synthesis presets, in a fixed order.
const std::vector<SynthesisPreset>& synthesis_presets();

/// The synthesis preset `name`; throws Error(bad_input) listing the known names otherwise.
SynthesisSpec synthesis_preset(std::string_view name);

}  // namespace refenc::profile
