// RequestTrace: what happened to one get_or_encode call, filled in by the service when asked.
//
// The profiler passes one per request; the service writes timestamps and the outcome into it. A null
// trace (the default) costs one pointer test per step.
//
//   RequestTrace t;
//   service.get_or_encode(req, "clip 7", &t);
//   t.outcome == RequestOutcome::merged;  t.encode_end - t.encode_start;  t.batch_size;
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "core/reference_encode_key.hpp"

namespace refenc {

enum class RequestOutcome {
  none,         ///< Not finished (or no trace).
  hit,          ///< Served from the memory tier.
  disk_hit,     ///< Leader served from the second tier.
  encoded,      ///< Leader encoded it.
  merged,       ///< Follower of a same-key leader that succeeded.
  uncacheable,  ///< No cache key: encoded without cache or single-flight.
  failed,       ///< Threw (bad input, encode failure, timeout, cancelled, closed).
  shared_hit,   ///< Leader served from a second tier shared with other hosts (Redis).
};

std::string_view to_string(RequestOutcome outcome) noexcept;

struct RequestTrace {
  using Clock = std::chrono::steady_clock;
  RequestOutcome outcome = RequestOutcome::none;
  std::optional<ReferenceEncodeKey> key;  ///< The request's cache key (no value: uncacheable or not reached).
  Clock::time_point start;                ///< get_or_encode entered.
  Clock::time_point normalized;           ///< normalize_input returned (decode, resample).
  Clock::time_point keyed;                ///< cache_key returned.
  Clock::time_point encode_start;         ///< Leader: encode (or disk read) began; follower: wait began.
  Clock::time_point encode_end;           ///< Leader: encode ended; follower: wait ended.
  Clock::time_point end;                  ///< get_or_encode returned or threw.
  int batch_size = 0;                     ///< Size of the batch that encoded it (M4b), 0 when not batched.
  double batch_padding = 0;               ///< Padded fraction of that batch (BatchCoalescer), 0 when not batched.
  std::uint64_t batch_id = 0;             ///< That batch's id in its service (from 1), 0 when not batched.
  std::size_t stored_bytes = 0;           ///< The hook's stored_bytes of the artifact served (0: none).
  bool timed_out = false;                 ///< Gave up waiting: the follower timeout or the caller's deadline.
  bool cancelled = false;                 ///< Gave up on the caller's stop request.
  bool cached = false;                    ///< The artifact was inserted into the memory tier by this call.
};

}  // namespace refenc
