// Loudness normalisation: scale a clip so its RMS level reaches a target dBFS, with the gain clamped
// (MOSS-TTS uses -20 dBFS within +-3 dB).
//
//   double db = audio::rms_dbfs(samples);                          // -inf for silence
//   double gain = audio::normalize_loudness(samples, -20.0, 3.0);  // dB applied, in [-3, +3]
#pragma once

#include <span>

namespace refenc::audio {

/// RMS level in dB relative to full scale (a full-scale square wave is 0 dBFS, a full-scale sine
/// about -3.01 dBFS); -infinity for silence or an empty clip.
double rms_dbfs(std::span<const float> samples) noexcept;

/// The gain in dB that moves a clip at `current_dbfs` to `target_dbfs`, clamped to +-max_gain_db;
/// 0 for silence (a non-finite level).
double loudness_gain_db(double current_dbfs, double target_dbfs, double max_gain_db) noexcept;

/// Applies loudness_gain_db() in place and returns the gain applied in dB. Samples are not clipped.
double normalize_loudness(std::span<float> samples, double target_dbfs, double max_gain_db) noexcept;

}  // namespace refenc::audio
