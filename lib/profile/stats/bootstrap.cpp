#include "profile/stats/bootstrap.hpp"

#include <algorithm>
#include <random>

#include "core/error.hpp"
#include "profile/stats/percentile.hpp"

namespace refenc::profile {
namespace {

void check(const BootstrapOptions& o) {
  if (o.resamples < 1) throw Error(ErrorKind::config, "bootstrap resamples must be at least 1");
  if (!(o.confidence > 0 && o.confidence < 1)) throw Error(ErrorKind::config, "bootstrap confidence must be in (0, 1)");
}

Interval finish(double point, std::vector<double>& values, double confidence) {
  std::sort(values.begin(), values.end());
  double tail = (1.0 - confidence) / 2.0 * 100.0;
  return {point, percentile_sorted(values, tail), percentile_sorted(values, 100.0 - tail)};
}

}  // namespace

std::uint64_t stable_hash(std::string_view text) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

Interval bootstrap_pair(std::span<const double> a, std::span<const double> b, const PairStatistic& stat,
                        const BootstrapOptions& options) {
  check(options);
  if (a.empty() || b.empty()) throw Error(ErrorKind::config, "bootstrap needs two non-empty samples");
  std::mt19937_64 rng(options.seed);
  std::vector<double> ra, rb, values;
  values.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    resample_into(a, rng, ra);
    resample_into(b, rng, rb);
    values.push_back(stat(ra, rb));
  }
  return finish(stat(a, b), values, options.confidence);
}

Interval bootstrap_one(std::span<const double> a, const std::function<double(std::span<const double>)>& stat,
                       const BootstrapOptions& options) {
  check(options);
  if (a.empty()) throw Error(ErrorKind::config, "bootstrap needs a non-empty sample");
  std::mt19937_64 rng(options.seed);
  std::vector<double> ra, values;
  values.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    resample_into(a, rng, ra);
    values.push_back(stat(ra));
  }
  return finish(stat(a), values, options.confidence);
}

Interval bootstrap_many(std::span<const std::vector<double>> samples, const ManyStatistic& stat,
                        const BootstrapOptions& options) {
  check(options);
  for (const auto& s : samples)
    if (s.empty()) throw Error(ErrorKind::config, "bootstrap needs non-empty samples");
  std::mt19937_64 rng(options.seed);
  std::vector<std::vector<double>> drawn(samples.size());
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    for (std::size_t k = 0; k < samples.size(); ++k) resample_into(samples[k], rng, drawn[k]);
    values.push_back(stat(drawn));
  }
  return finish(stat(samples), values, options.confidence);
}

}  // namespace refenc::profile
