// The JSON of the noise side of a run: a cell's host load and contamination, report.json's "noise"
// block (A/A arms, contamination thresholds, the stopping rule and where groups stopped, A/A spread).
#include "profile/record/json_fields.hpp"
#include "profile/record/record_json.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

json host_load_json(const HostLoad& h) {
  if (!h.available) return {{"available", false}, {"reason", h.reason}, {"cores", h.cores}};
  return {{"available", true},
          {"cores", h.cores},
          {"wall_s", h.wall_s},
          {"load1_start", h.load1_start},
          {"load1_end", h.load1_end},
          {"busy_share", h.busy_share},
          {"own_cpu_share", h.own_cpu_share},
          {"other_cpu_share", h.other_cpu_share},
          {"other_cores", h.other_cores()},
          {"steal_share", h.steal_share}};
}

HostLoad read_host_load(const JsonFields& in, const json& j, const std::string& w) {
  if (!j.is_object()) in.fail(w, "expected an object");
  HostLoad h;
  h.available = in.flag(j, w, "available");
  h.reason = in.str(j, w, "reason");
  h.cores = static_cast<unsigned>(in.integer(j, w, "cores"));
  h.wall_s = in.num(j, w, "wall_s");
  h.load1_start = in.num(j, w, "load1_start");
  h.load1_end = in.num(j, w, "load1_end");
  h.busy_share = in.num(j, w, "busy_share");
  h.own_cpu_share = in.num(j, w, "own_cpu_share");
  h.other_cpu_share = in.num(j, w, "other_cpu_share");
  h.steal_share = in.num(j, w, "steal_share");
  return h;
}

std::vector<std::string> read_strings(const JsonFields& in, const json& j, const std::string& w, const char* key) {
  std::vector<std::string> out;
  const json& a = in.arr(j, w, key);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) in.fail(JsonFields::idx(JsonFields::key(w, key), i), "expected a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

}  // namespace

void add_noise_fields(const Cell& c, json& out) {
  if (c.aa) out["aa"] = true;
  if (!c.host_load) return;
  out["host_load"] = host_load_json(*c.host_load);
  out["contaminated"] = c.contaminated;
  out["contamination"] = c.contamination;
  json d = json::array();
  for (const HostLoad& h : c.discarded) d.push_back(host_load_json(h));
  out["discarded_attempts"] = d;
}

void read_noise_fields(const JsonFields& in, const json& j, const std::string& w, Cell& c) {
  c.aa = in.flag(j, w, "aa");
  if (const json* h = in.find(j, "host_load")) c.host_load = read_host_load(in, *h, JsonFields::key(w, "host_load"));
  c.contaminated = in.flag(j, w, "contaminated");
  c.contamination = read_strings(in, j, w, "contamination");
  const json& d = in.arr(j, w, "discarded_attempts");
  for (std::size_t i = 0; i < d.size(); ++i)
    c.discarded.push_back(read_host_load(in, d[i], JsonFields::idx(JsonFields::key(w, "discarded_attempts"), i)));
}

json noise_json(const NoiseSettings& n) {
  json arms = json::array();
  for (Arm a : n.aa_arms) arms.push_back(to_string(a));
  const ContaminationSpec& c = n.contamination;
  json stops = json::array();
  for (const StopRecord& s : n.stops)
    stops.push_back({{"model", s.model},
                     {"phase", to_string(s.phase)},
                     {"concurrency", s.concurrency},
                     {"repeats", s.repeats},
                     {"reason", s.reason},
                     {"p95_e2e_reduction_width", s.p95_width},
                     {"throughput_gain_width", s.throughput_width}});
  json spread = json::array();
  for (const AaSpread& a : n.aa_spread) {
    spread.push_back({{"group", a.group.label()},
                      {"model", a.group.model},
                      {"arm", to_string(a.group.arm)},
                      {"phase", to_string(a.group.phase)},
                      {"concurrency", a.group.concurrency},
                      {"metric", a.metric},
                      {"differences", a.differences},
                      {"spread", a.spread}});
    if (a.group.threads > 0) spread.back()["threads"] = a.group.threads;  // a profiled dimension only
  }
  return {{"aa_arms", arms},
          {"contamination",
           {{"enabled", c.enabled},
            {"max_other_cores", c.max_other_cores},
            {"max_steal_share", c.max_steal_share},
            {"max_load_per_core", c.max_load_per_core},
            {"max_reruns", c.max_reruns}}},
          {"stopping", {{"max_repeats", n.stopping.max_repeats}, {"target_width", n.stopping.target_width}}},
          {"stops", stops},
          {"aa_spread", spread},
          {"aa_spread_method",
           "per A/A pair (a cell and its twin: same model, arm, phase, concurrency and repeat, run one after the "
           "other): |metric(twin) / metric(cell) - 1|, metrics over successful requests (nearest-rank "
           "percentiles; throughput = successful requests / wall time); spread = the largest over the pairs"}};
}

NoiseSettings read_noise(const JsonFields& in, const json& j) {
  const std::string w = "noise";
  if (!j.is_object()) in.fail(w, "expected an object");
  NoiseSettings n;
  n.aa_arms.clear();
  const json& arms = in.arr(j, w, "aa_arms");
  for (std::size_t i = 0; i < arms.size(); ++i) {
    std::string wi = JsonFields::idx("noise.aa_arms", i);
    if (!arms[i].is_string()) in.fail(wi, "expected a string");
    try {
      n.aa_arms.push_back(parse_arm(arms[i].get<std::string>()));
    } catch (const std::exception& e) {
      in.fail(wi, e.what());
    }
  }
  const std::string wc = "noise.contamination";
  const json& c = in.obj(j, w, "contamination");
  ContaminationSpec d;
  n.contamination.enabled = in.flag(c, wc, "enabled", d.enabled);
  n.contamination.max_other_cores = in.num(c, wc, "max_other_cores", d.max_other_cores);
  n.contamination.max_steal_share = in.num(c, wc, "max_steal_share", d.max_steal_share);
  n.contamination.max_load_per_core = in.num(c, wc, "max_load_per_core", d.max_load_per_core);
  n.contamination.max_reruns = static_cast<int>(in.integer(c, wc, "max_reruns", d.max_reruns));
  const json& s = in.obj(j, w, "stopping");
  n.stopping.max_repeats = static_cast<int>(in.integer(s, "noise.stopping", "max_repeats"));
  n.stopping.target_width = in.num(s, "noise.stopping", "target_width");
  const json& stops = in.arr(j, w, "stops");
  for (std::size_t i = 0; i < stops.size(); ++i) {
    std::string wi = JsonFields::idx("noise.stops", i);
    StopRecord r;
    r.model = in.str(stops[i], wi, "model", "", true);
    r.phase = in.label(stops[i], wi, "phase", "cold", parse_phase);
    r.concurrency = static_cast<int>(in.integer(stops[i], wi, "concurrency"));
    r.repeats = static_cast<int>(in.integer(stops[i], wi, "repeats"));
    r.reason = in.str(stops[i], wi, "reason");
    r.p95_width = in.num(stops[i], wi, "p95_e2e_reduction_width");
    r.throughput_width = in.num(stops[i], wi, "throughput_gain_width");
    n.stops.push_back(std::move(r));
  }
  const json& spread = in.arr(j, w, "aa_spread");
  for (std::size_t i = 0; i < spread.size(); ++i) {
    std::string wi = JsonFields::idx("noise.aa_spread", i);
    AaSpread a;
    a.group.model = in.str(spread[i], wi, "model", "", true);
    a.group.arm = in.label(spread[i], wi, "arm", "", parse_arm);
    a.group.phase = in.label(spread[i], wi, "phase", "", parse_phase);
    a.group.concurrency = static_cast<int>(in.integer(spread[i], wi, "concurrency", 0, true));
    a.group.threads = static_cast<int>(in.integer(spread[i], wi, "threads"));
    a.metric = in.str(spread[i], wi, "metric", "", true);
    a.spread = in.num(spread[i], wi, "spread");
    const json& diffs = in.arr(spread[i], wi, "differences");
    for (std::size_t k = 0; k < diffs.size(); ++k) {
      if (!diffs[k].is_number()) in.fail(JsonFields::idx(JsonFields::key(wi, "differences"), k), "expected a number");
      a.differences.push_back(diffs[k].get<double>());
    }
    n.aa_spread.push_back(std::move(a));
  }
  return n;
}

}  // namespace refenc::profile

namespace refenc::profile {

void add_stability_fields(const ModelVerdict& m, nlohmann::json& out) {
  if (!m.contaminated.empty()) out["contaminated"] = m.contaminated;
  if (!m.stability) return;
  const VerdictStability& s = *m.stability;
  nlohmann::json verdicts = nlohmann::json::array();
  for (Verdict v : s.repeat_verdicts) verdicts.push_back(to_string(v));
  nlohmann::json j{{"repeats", s.repeats},
                   {"repeats_agreeing", s.repeats_agreeing},
                   {"repeat_verdicts", verdicts},
                   {"method",
                    "bootstrap_agreement: per concurrency level, the share of the gate's bootstrap replicates giving "
                    "the level's verdict (a replicate is GO when its p95 reduction or throughput gain clears the "
                    "threshold); the smallest over levels with a GO or NO-GO outcome. repeats: the gate on each "
                    "repeat's cells alone"}};
  if (s.bootstrap_agreement >= 0) j["bootstrap_agreement"] = s.bootstrap_agreement;
  out["stability"] = j;
}

void read_stability_fields(const JsonFields& in, const nlohmann::json& j, const std::string& w, ModelVerdict& m) {
  const nlohmann::json& c = in.arr(j, w, "contaminated");
  for (std::size_t i = 0; i < c.size(); ++i)
    m.contaminated.push_back(c[i].is_string() ? c[i].get<std::string>() : c[i].dump());
  const nlohmann::json* s = in.find(j, "stability");
  if (!s) return;
  const std::string ws = JsonFields::key(w, "stability");
  VerdictStability v;
  v.repeats = static_cast<int>(in.integer(*s, ws, "repeats"));
  v.repeats_agreeing = static_cast<int>(in.integer(*s, ws, "repeats_agreeing"));
  v.bootstrap_agreement = in.num(*s, ws, "bootstrap_agreement", -1);
  const nlohmann::json& rv = in.arr(*s, ws, "repeat_verdicts");
  for (std::size_t i = 0; i < rv.size(); ++i) {
    std::string wi = JsonFields::idx(JsonFields::key(ws, "repeat_verdicts"), i);
    if (!rv[i].is_string()) in.fail(wi, "expected a verdict");
    try {
      v.repeat_verdicts.push_back(parse_verdict(rv[i].get<std::string>()));
    } catch (const std::exception& e) {
      in.fail(wi, e.what());
    }
  }
  m.stability = v;
}

}  // namespace refenc::profile
