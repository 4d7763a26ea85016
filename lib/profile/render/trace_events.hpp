// Request timelines as a Chrome trace-event file, loadable in Perfetto (ui.perfetto.dev) or
// chrome://tracing: one process per cell (and per rate step of a capacity sweep), one thread track per
// runner worker.
//
// Each request is a complete event "request" from its scheduled send spanning its E2E, with four
// children laid end to end: "queue" (scheduled send to the service call), "preprocessing" and
// "encode" (measured; encode carries the outcome, and for a batched encode the batch's id within the
// cell and its size), then "synthesis" (modelled).
// Their durations sum to the request's E2E, so every figure comes from requests.jsonl alone. Times
// are microseconds from the cell's start. A worker's requests that overlap in time (open-loop queueing,
// or modelled synthesis that was not slept) go on extra lanes named "worker N (overlap L)" so that
// events on one track always nest. A failed request spans its queue only and carries its error.
// Runs without a recorded worker place requests on the first lane free at their scheduled send.
//
//   std::string path = write_trace_events("runs/20261202-143000-nightly", "timeline.json");
//   std::vector<TraceEvent> events = request_timelines(load_run_with_requests(dir));
#pragma once

#include <string>
#include <vector>

#include "profile/record/run_record.hpp"
#include "profile/record/trace_event.hpp"

namespace refenc::profile {

/// The events of every cell's requests, metadata (track names) first.
std::vector<TraceEvent> request_timelines(const RunRecord& run);

/// Writes the trace of the run at `run_dir` (requests.jsonl required) to `out`, atomically; returns
/// the path written (`out`, or `run_dir`/trace.json when empty).
std::string write_trace_events(const std::string& run_dir, const std::string& out = {});

}  // namespace refenc::profile
