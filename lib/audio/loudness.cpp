#include "audio/loudness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace refenc::audio {

double rms_dbfs(std::span<const float> samples) noexcept {
  if (samples.empty()) return -std::numeric_limits<double>::infinity();
  double sum = 0;
  for (float s : samples) sum += double(s) * double(s);
  const double mean = sum / double(samples.size());
  if (mean <= 0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(mean);
}

double loudness_gain_db(double current_dbfs, double target_dbfs, double max_gain_db) noexcept {
  if (!std::isfinite(current_dbfs) || !std::isfinite(target_dbfs)) return 0.0;
  const double limit = std::abs(max_gain_db);
  return std::clamp(target_dbfs - current_dbfs, -limit, limit);
}

double normalize_loudness(std::span<float> samples, double target_dbfs, double max_gain_db) noexcept {
  const double gain_db = loudness_gain_db(rms_dbfs(samples), target_dbfs, max_gain_db);
  if (gain_db == 0.0) return 0.0;
  const auto factor = static_cast<float>(std::pow(10.0, gain_db / 20.0));
  for (float& s : samples) s *= factor;
  return gain_db;
}

}  // namespace refenc::audio
