// Capacity under a latency SLO: the highest open-loop arrival rate at which the p95 time to first audio
// (TTFA) stays within its objective, from the steps of a rate sweep, with its bootstrap interval, and
// the rate the automatic search tries next.
//
// A step meets the SLO when the nearest-rank p95 of its requests' TTFA is at most the SLO (a failed
// request counts as infinitely slow). The capacity is the highest swept rate that meets the SLO below
// the lowest swept rate that does not (0 when the lowest rate fails already); when no step fails it is
// only a lower bound (`censored`). Intervals resample each step's TTFA samples with the one bootstrap
// (bootstrap.hpp, bootstrap_many: steps in the order given, one generator) and recompute the capacity.
//
//   std::vector<SweepStep> steps{{10, {0.1, 0.2, 0.3}}, {20, {0.2, 0.4, 0.9}}};
//   double cap = capacity_at_slo(steps, 0.5);   // 10: 20 req/s misses a 500 ms p95
//   Interval ci = capacity_interval(steps, 0.5, {.resamples = 2000, .seed = 7});
//   std::optional<double> next = next_search_rate(to_points(steps, 0.5), RateSearch{});   // 15
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "profile/stats/bootstrap.hpp"

namespace refenc::profile {

/// The percentile of TTFA that a capacity SLO bounds.
inline constexpr double capacity_percentile = 95;

/// One step of a rate sweep: its offered arrival rate and each sent request's TTFA in seconds
/// (infinity for a failed request).
struct SweepStep {
  double rate_per_s = 0;
  std::vector<double> ttfa_s;
};

/// A step reduced to whether it met the SLO.
struct RatePoint {
  double rate_per_s = 0;
  bool meets = false;
};

/// Nearest-rank p95 of `ttfa_s` (infinity when more than 5% failed); infinity for an empty sample.
double p95_ttfa(std::span<const double> ttfa_s);

/// Each step's rate and whether its p95 TTFA is at most `slo_s`.
std::vector<RatePoint> to_points(std::span<const SweepStep> steps, double slo_s);

/// The highest rate that meets the SLO below the lowest rate that does not; 0 when none does.
double capacity_at_slo(std::span<const RatePoint> points);
double capacity_at_slo(std::span<const SweepStep> steps, double slo_s);

/// True when no step failed the SLO: the capacity is only a lower bound.
bool capacity_censored(std::span<const RatePoint> points);

/// Interval of the capacity (req/s). Steps need non-empty samples (Error(config) otherwise).
Interval capacity_interval(std::span<const SweepStep> steps, double slo_s, const BootstrapOptions& options);

/// Interval of the relative change capacity(b) / capacity(a) - 1, both sweeps resampled in each
/// replicate (a's steps first). A replicate where a's capacity is 0 gives infinity (b > 0) or 0.
Interval capacity_change(std::span<const SweepStep> a, std::span<const SweepStep> b, double slo_s,
                         const BootstrapOptions& options);

/// The automatic search: double the rate from `start_rate_per_s` until a step misses the SLO (or
/// `max_rate_per_s` is reached), halve it while the lowest step misses, then bisect between the highest
/// passing and the lowest failing rate until they are within `precision` of the failing one.
struct RateSearch {
  double start_rate_per_s = 1;
  double max_rate_per_s = 100000;
  double precision = 0.02;
  int max_steps = 14;
};

/// The rate to run next after the steps in `done` (any order), or none when the search is over.
std::optional<double> next_search_rate(std::span<const RatePoint> done, const RateSearch& search);

}  // namespace refenc::profile
