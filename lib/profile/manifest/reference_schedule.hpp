// Reference schedule: which reference each measured request of a phase sends, as indices into the
// reference set (reference_set.hpp), seeded and identical on every platform.
//
// The set is laid out as [0, measured) the measured references, then `warmup` warmup references, then
// the never-seen ones. A phase's requests use references [0, distinct): by default request j uses
// j mod distinct (a fixed cycle); with `popularity.zipf` = s each draws rank r with weight 1/(r+1)^s
// (s = 0: uniform). With `never_seen_share` = p, round(p * requests) requests at seeded positions use
// a reference of their own instead, never sent before or again in the cell. With a request trace
// (`references.trace`), a phase replays the trace's first `requests` lines: ids become references
// 0, 1, ... in order of first appearance (so `distinct` is the ids among those lines), and the lines'
// times, less the first, are the open-loop arrival schedule.
//
//   ReferenceSpec spec;  spec.zipf = 1.1;  spec.never_seen_share = 0.1;
//   PhaseSpec phase;  phase.requests = 100;  phase.distinct = 20;
//   std::vector<std::size_t> refs = reference_schedule(spec, phase, /*first_never_seen=*/22, /*seed=*/1);
//   int fresh = never_seen_count(spec, phase);   // 10: refs holds 22..31 once each
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile/manifest/manifest.hpp"

namespace refenc::profile {

/// Never-seen requests of a phase: round(never_seen_share * requests).
int never_seen_count(const ReferenceSpec& spec, const PhaseSpec& phase);

/// Distinct reference ids among the trace's first `requests` lines.
int trace_distinct(const ReferenceSpec& spec, int requests);

/// The trace's arrival times for the phase, seconds from its first line; empty without a trace.
std::vector<double> trace_arrivals(const ReferenceSpec& spec, const PhaseSpec& phase);

/// The reference index of each of the phase's `requests` requests. Never-seen requests take
/// first_never_seen, first_never_seen + 1, ... in send order.
std::vector<std::size_t> reference_schedule(const ReferenceSpec& spec, const PhaseSpec& phase,
                                            std::size_t first_never_seen, std::uint64_t seed);

}  // namespace refenc::profile
