// TraceEvent: one event of a Chrome trace-event file (the JSON that Perfetto and chrome://tracing
// load), typed; trace_events_json is the only code that knows that file's keys.
//
// Complete events ("ph": "X") carry a start and a duration in microseconds on a process (pid) and a
// thread (tid) track; metadata events ("ph": "M") name those tracks (process_name, thread_name).
//
//   std::vector<TraceEvent> events;
//   events.push_back(TraceEvent::metadata("process_name", 1, 0, "cell fish-s2-pro/m4a/cold/c8/r0"));
//   TraceEvent e{.name = "encode", .category = "measured", .ts_us = 10, .dur_us = 250, .pid = 1, .tid = 1};
//   e.batch_size = 4;
//   e.batch_id = 17;
//   events.push_back(e);
//   std::string file = trace_events_json(events).dump();   // {"traceEvents": [...], ...}
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace refenc::profile {

struct TraceEvent {
  enum class Kind { complete, metadata };
  Kind kind = Kind::complete;
  std::string name;      ///< The event's name; for metadata, "process_name" or "thread_name".
  std::string category;  ///< "cat": "request", "measured" or "modelled".
  double ts_us = 0;      ///< Start, microseconds from the cell's start.
  double dur_us = 0;     ///< Duration in microseconds (complete events).
  int pid = 0;           ///< One per cell.
  int tid = 0;           ///< One per worker (and per overlap lane of a worker).
  // Arguments ("args"); each is written only when set.
  std::string label;                 ///< Metadata: the track's name.
  std::optional<std::size_t> index;  ///< The request's index in its cell.
  std::string reference;             ///< Reference id.
  std::string outcome;               ///< hit, encoded, merged, ...
  std::string key;                   ///< The cache key's digest.
  std::string error;                 ///< A failed request's error.
  std::optional<int> worker;
  std::optional<int> batch_size;
  std::optional<std::uint64_t> batch_id;  ///< The encode's batch within its cell (M4b).
  std::optional<std::uint64_t> stored_bytes;

  /// A metadata event naming a process (`name` "process_name") or a thread ("thread_name").
  static TraceEvent metadata(std::string name, int pid, int tid, std::string label);
};

/// The trace-event file: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}} with
/// `about` (e.g. the run folder) under otherData.
nlohmann::json trace_events_json(const std::vector<TraceEvent>& events, const std::string& about = {});

}  // namespace refenc::profile
