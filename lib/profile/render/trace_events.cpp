#include "profile/render/trace_events.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "profile/record/run_folder.hpp"
#include "util/atomic_file.hpp"

namespace refenc::profile {
namespace {

constexpr double us_per_s = 1e6;
/// Track ids: lane L of worker W is tid (L * lane_stride + W + 1).
constexpr int lane_stride = 1000;

/// The span a request occupies on its track, in microseconds.
double span_us(const RequestRecord& r) { return (r.ok() ? r.e2e_s : r.queue_s) * us_per_s; }

/// Lanes of one worker (or of the whole cell when workers were not recorded): each request goes on the
/// first lane whose last request ended by its start.
class Lanes {
 public:
  int place(double start, double end) {
    for (std::size_t l = 0; l < ends_.size(); ++l)
      if (ends_[l] <= start) {
        ends_[l] = end;
        return static_cast<int>(l);
      }
    ends_.push_back(end);
    return static_cast<int>(ends_.size() - 1);
  }

 private:
  std::vector<double> ends_;
};

void add_request(std::vector<TraceEvent>& out, const RequestRecord& r, int pid, int tid) {
  const double t0 = r.scheduled_s * us_per_s;
  TraceEvent request{
      .name = "request", .category = "request", .ts_us = t0, .dur_us = span_us(r), .pid = pid, .tid = tid};
  request.index = r.index;
  request.reference = r.reference;
  request.outcome = r.outcome;
  request.key = r.key;
  request.error = r.error;
  if (r.worker >= 0) request.worker = r.worker;
  out.push_back(request);
  // Children end to end; each boundary is the running sum, so the durations add up to the parent's.
  const double b1 = t0 + r.queue_s * us_per_s;
  out.push_back({.name = "queue", .category = "measured", .ts_us = t0, .dur_us = b1 - t0, .pid = pid, .tid = tid});
  if (!r.ok()) return;
  const double b2 = b1 + r.preprocessing_s * us_per_s;
  const double b3 = b2 + r.encode_s * us_per_s;
  const double b4 = b3 + r.synthesis_end_s * us_per_s;
  out.push_back(
      {.name = "preprocessing", .category = "measured", .ts_us = b1, .dur_us = b2 - b1, .pid = pid, .tid = tid});
  TraceEvent encode{.name = "encode", .category = "measured", .ts_us = b2, .dur_us = b3 - b2, .pid = pid, .tid = tid};
  encode.outcome = r.outcome;
  encode.batch_size = r.batch_size;
  if (r.batch_id > 0) encode.batch_id = r.batch_id;
  if (r.stored_bytes > 0) encode.stored_bytes = r.stored_bytes;
  out.push_back(encode);
  out.push_back({.name = "synthesis", .category = "modelled", .ts_us = b3, .dur_us = b4 - b3, .pid = pid, .tid = tid});
}

}  // namespace

std::vector<TraceEvent> request_timelines(const RunRecord& run) {
  std::vector<TraceEvent> meta, events;
  int pid = 0;
  auto add_process = [&](const std::string& label, const std::vector<RequestRecord>& records) {
    ++pid;
    meta.push_back(TraceEvent::metadata("process_name", pid, 0, label));
    std::vector<const RequestRecord*> order;
    for (const RequestRecord& r : records) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(),
                     [](const RequestRecord* a, const RequestRecord* b) { return a->scheduled_s < b->scheduled_s; });
    std::map<int, Lanes> lanes;  // by worker; -1 for requests without one
    std::map<int, std::string> tracks;
    for (const RequestRecord* r : order) {
      const double start = r->scheduled_s * us_per_s;
      const int lane = lanes[r->worker].place(start, start + span_us(*r));
      const int worker = std::max(r->worker, 0);
      const int tid = lane * lane_stride + worker + 1;
      if (!tracks.count(tid)) {
        std::string name = r->worker >= 0 ? "worker " + std::to_string(worker) : "requests";
        if (r->worker >= 0 && lane > 0)
          name += " (overlap " + std::to_string(lane) + ")";
        else if (r->worker < 0)
          name += " (lane " + std::to_string(lane) + ")";
        tracks[tid] = std::move(name);
      }
      add_request(events, *r, pid, tid);
    }
    for (const auto& [tid, name] : tracks) meta.push_back(TraceEvent::metadata("thread_name", pid, tid, name));
  };
  for (const Cell& cell : run.cells) add_process("cell " + cell.key.id(), run.requests_of(cell.key));
  if (run.capacity)  // each rate step of a capacity sweep is a process of its own
    for (const CapacitySweep& s : run.capacity->sweeps)
      for (const RateStep& st : s.steps)
        if (auto it = run.requests.find(s.step_id(st.index)); it != run.requests.end())
          add_process(fmt::format("rate step {} ({:g} req/s)", s.step_id(st.index), st.rate_per_s), it->second);
  meta.insert(meta.end(), std::make_move_iterator(events.begin()), std::make_move_iterator(events.end()));
  return meta;
}

std::string write_trace_events(const std::string& run_dir, const std::string& out) {
  RunRecord run = load_run_with_requests(run_dir);
  std::string target = out.empty() ? (std::filesystem::path(run.dir) / "trace.json").string() : out;
  write_file_atomic(target, trace_events_json(request_timelines(run), run.dir).dump() + '\n');
  return target;
}

}  // namespace refenc::profile
