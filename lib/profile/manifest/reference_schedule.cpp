#include "profile/manifest/reference_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>

namespace refenc::profile {
namespace {

/// Uniform in [0, 1) from the top 53 bits: the same on every standard library.
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) / static_cast<double>(1ULL << 53); }

/// Reference index per trace id, by first appearance among the first `requests` lines.
std::vector<std::size_t> trace_indices(const ReferenceSpec& spec, std::size_t requests) {
  std::unordered_map<std::string, std::size_t> ids;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < std::min(requests, spec.trace_lines.size()); ++i)
    out.push_back(ids.try_emplace(spec.trace_lines[i].reference, ids.size()).first->second);
  return out;
}

}  // namespace

int trace_distinct(const ReferenceSpec& spec, int requests) {
  auto idx = trace_indices(spec, static_cast<std::size_t>(std::max(requests, 0)));
  return idx.empty() ? 0 : static_cast<int>(*std::max_element(idx.begin(), idx.end()) + 1);
}

std::vector<double> trace_arrivals(const ReferenceSpec& spec, const PhaseSpec& phase) {
  std::vector<double> out;
  const auto n = std::min(static_cast<std::size_t>(std::max(phase.requests, 0)), spec.trace_lines.size());
  for (std::size_t i = 0; i < n; ++i) out.push_back(spec.trace_lines[i].t - spec.trace_lines[0].t);
  return out;
}

int never_seen_count(const ReferenceSpec& spec, const PhaseSpec& phase) {
  return static_cast<int>(std::llround(spec.never_seen_share * phase.requests));
}

std::vector<std::size_t> reference_schedule(const ReferenceSpec& spec, const PhaseSpec& phase,
                                            std::size_t first_never_seen, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(std::max(phase.requests, 0));
  if (!spec.trace_lines.empty()) return trace_indices(spec, n);
  const auto distinct = static_cast<std::size_t>(std::max(phase.distinct, 1));
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + 0x5EED);

  // Never-seen positions: the first k of a seeded Fisher-Yates shuffle of [0, n).
  std::vector<char> fresh(n, 0);
  const auto k = std::min(n, static_cast<std::size_t>(std::max(never_seen_count(spec, phase), 0)));
  if (k > 0) {
    std::vector<std::size_t> pos(n);
    for (std::size_t i = 0; i < n; ++i) pos[i] = i;
    for (std::size_t i = 0; i < k; ++i) {
      std::size_t j = i + static_cast<std::size_t>(unit(rng) * static_cast<double>(n - i));
      std::swap(pos[i], pos[std::min(j, n - 1)]);
      fresh[pos[i]] = 1;
    }
  }

  std::vector<double> cumulative;
  if (spec.zipf) {
    double total = 0;
    for (std::size_t r = 0; r < distinct; ++r)
      cumulative.push_back(total += std::pow(static_cast<double>(r + 1), -*spec.zipf));
    for (double& c : cumulative) c /= total;
  }
  std::vector<std::size_t> out(n);
  std::size_t next_fresh = first_never_seen, cycle = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (fresh[i]) {
      out[i] = next_fresh++;
    } else if (spec.zipf) {
      auto it = std::upper_bound(cumulative.begin(), cumulative.end(), unit(rng));
      out[i] = std::min(static_cast<std::size_t>(it - cumulative.begin()), distinct - 1);
    } else {
      out[i] = cycle++ % distinct;
    }
  }
  return out;
}

}  // namespace refenc::profile
