#include "profile/record/trace_event.hpp"

namespace refenc::profile {

using nlohmann::json;

TraceEvent TraceEvent::metadata(std::string name, int pid, int tid, std::string label) {
  TraceEvent e;
  e.kind = Kind::metadata;
  e.name = std::move(name);
  e.pid = pid;
  e.tid = tid;
  e.label = std::move(label);
  return e;
}

json trace_events_json(const std::vector<TraceEvent>& events, const std::string& about) {
  json list = json::array();
  for (const TraceEvent& e : events) {
    json args = json::object();
    if (!e.label.empty()) args["name"] = e.label;
    if (e.index) args["index"] = *e.index;
    if (!e.reference.empty()) args["reference"] = e.reference;
    if (!e.outcome.empty()) args["outcome"] = e.outcome;
    if (!e.key.empty()) args["key"] = e.key;
    if (!e.error.empty()) args["error"] = e.error;
    if (e.worker) args["worker"] = *e.worker;
    if (e.batch_size) args["batch_size"] = *e.batch_size;
    if (e.batch_id) args["batch_id"] = *e.batch_id;
    if (e.stored_bytes) args["stored_bytes"] = *e.stored_bytes;
    json j{{"name", e.name},
           {"ph", e.kind == TraceEvent::Kind::complete ? "X" : "M"},
           {"pid", e.pid},
           {"tid", e.tid},
           {"args", args}};
    if (e.kind == TraceEvent::Kind::complete) {
      j["cat"] = e.category;
      j["ts"] = e.ts_us;
      j["dur"] = e.dur_us;
    }
    list.push_back(std::move(j));
  }
  json out{{"traceEvents", list}, {"displayTimeUnit", "ms"}};
  if (!about.empty()) out["otherData"] = {{"source", about}};
  return out;
}

}  // namespace refenc::profile
