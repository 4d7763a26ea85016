// Seeded percentile bootstrap for comparing two arms of a profile (M4b against M4a).
//
// Method: B resamples; each draws n_a requests with replacement from arm A's sample and n_b from arm
// B's, and evaluates the statistic on the pair; the 95% interval is the 2.5th and 97.5th nearest-rank
// percentiles of the B values. Indices come from a std::mt19937_64 seeded with `seed`, reduced with a
// modulo, so results are identical across platforms and standard libraries.
//
//   auto ci = refenc::profile::bootstrap_pair(m4a_e2e, m4b_e2e, p95_reduction, {.resamples = 2000, .seed = 7});
//   std::cout << ci.point << " [" << ci.lo << ", " << ci.hi << "]\n";
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace refenc::profile {

struct BootstrapOptions {
  int resamples = 2000;      ///< B (>= 1).
  std::uint64_t seed = 1;    ///< Seeds the index generator.
  double confidence = 0.95;  ///< Two-sided level of the percentile interval, in (0, 1).
};

struct Interval {
  double point = 0;  ///< The statistic on the original samples.
  double lo = 0;     ///< Lower bound of the interval.
  double hi = 0;     ///< Upper bound.
};

/// Statistic of two samples (arm A, arm B), e.g. 1 - p95(B) / p95(A).
using PairStatistic = std::function<double(std::span<const double> a, std::span<const double> b)>;

/// Percentile-bootstrap interval of `stat` over independent resamples of `a` and `b` (both non-empty;
/// throws Error(config) otherwise).
Interval bootstrap_pair(std::span<const double> a, std::span<const double> b, const PairStatistic& stat,
                        const BootstrapOptions& options);

/// One-sample version: interval of `stat` over resamples of `a`.
Interval bootstrap_one(std::span<const double> a, const std::function<double(std::span<const double>)>& stat,
                       const BootstrapOptions& options);

/// Statistic of several samples at once (the steps of two rate sweeps, say).
using ManyStatistic = std::function<double(std::span<const std::vector<double>> samples)>;

/// Many-sample version: each replicate resamples every sample of `samples`, in order, with the one
/// generator, and evaluates `stat` on them all. Every sample must be non-empty (Error(config) otherwise).
Interval bootstrap_many(std::span<const std::vector<double>> samples, const ManyStatistic& stat,
                        const BootstrapOptions& options);

/// FNV-1a 64 of `text`: a platform-independent hash for deriving a bootstrap seed from a name.
std::uint64_t stable_hash(std::string_view text) noexcept;

/// Fills `out` with `source.size()` draws with replacement from `source` using `rng`.
template <class Rng>
void resample_into(std::span<const double> source, Rng& rng, std::vector<double>& out) {
  out.resize(source.size());
  for (auto& x : out) x = source[static_cast<std::size_t>(rng() % source.size())];
}

}  // namespace refenc::profile
