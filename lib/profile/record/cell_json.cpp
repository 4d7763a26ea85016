// A cell of report.json in both directions.
#include "profile/record/json_fields.hpp"
#include "profile/record/record_json.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

json summary_json(Stage stage, const Summary& s) {
  return {{"kind", stage_kind(stage)},
          {"count", s.count},
          {"mean", s.mean},
          {"p50", s.p50},
          {"p90", s.p90},
          {"p95", s.p95},
          {"p99", s.p99},
          {"max", s.max}};
}

Summary read_summary(const JsonFields& in, const json& j, const std::string& w) {
  Summary s;
  s.count = static_cast<std::size_t>(in.integer(j, w, "count"));
  s.mean = in.num(j, w, "mean");
  s.p50 = in.num(j, w, "p50");
  s.p90 = in.num(j, w, "p90");
  s.p95 = in.num(j, w, "p95");
  s.p99 = in.num(j, w, "p99");
  s.max = in.num(j, w, "max");
  return s;
}

void read_metric(const JsonFields& in, const json& metrics, const std::string& w, const char* key, GpuMetricStatus& m) {
  std::string wk = JsonFields::key(w, key);
  const json& j = in.obj(metrics, w, key);
  m.samples = static_cast<int>(in.integer(j, wk, "samples"));
  m.failures = static_cast<int>(in.integer(j, wk, "failures"));
  m.unavailable = in.str(j, wk, "unavailable");
}

TelemetrySummary read_telemetry(const JsonFields& in, const json& j, const std::string& w) {
  TelemetrySummary t;
  std::string wc = JsonFields::key(w, "cpu"), wg = JsonFields::key(w, "gpu");
  const json& c = in.obj(j, w, "cpu");
  t.cpu.available = in.flag(c, wc, "available");
  t.cpu.reason = in.str(c, wc, "reason");
  t.cpu.cores = static_cast<int>(in.integer(c, wc, "cores"));
  t.cpu.process_mean = in.num(c, wc, "process_cores_mean");
  t.cpu.process_max = in.num(c, wc, "process_cores_max");
  t.cpu.system_mean = in.num(c, wc, "system_util_mean");
  t.cpu.system_max = in.num(c, wc, "system_util_max");
  const json& g = in.obj(j, w, "gpu");
  t.gpu.available = in.flag(g, wg, "available");
  t.gpu.reason = in.str(g, wg, "reason");
  t.gpu.name = in.str(g, wg, "name");
  t.gpu.util_mean = in.num(g, wg, "util_percent_mean");
  t.gpu.util_max = in.num(g, wg, "util_percent_max");
  t.gpu.memory_used_max_mib = in.num(g, wg, "memory_used_max_mib");
  t.gpu.memory_total_mib = in.num(g, wg, "memory_total_mib");
  t.gpu.samples = static_cast<int>(in.integer(g, wg, "samples"));
  t.gpu.power_mean_w = in.num(g, wg, "power_w_mean");
  t.gpu.power_max_w = in.num(g, wg, "power_w_max");
  t.gpu.energy_j = in.num(g, wg, "energy_j");
  t.gpu.energy_method = in.str(g, wg, "energy_method");
  t.gpu.encodes = static_cast<std::uint64_t>(in.integer(g, wg, "encodes"));
  t.gpu.energy_per_encode_j = in.num(g, wg, "energy_per_encode_j");
  if (const json* m = in.find(g, "metrics")) {
    std::string wm = JsonFields::key(wg, "metrics");
    read_metric(in, *m, wm, "utilization", t.gpu.metrics.utilization);
    read_metric(in, *m, wm, "memory", t.gpu.metrics.memory);
    read_metric(in, *m, wm, "power", t.gpu.metrics.power);
    read_metric(in, *m, wm, "energy", t.gpu.metrics.energy);
  } else if (t.gpu.available) {
    // Reports written before per-metric status read utilisation and memory together in every sample.
    t.gpu.metrics.utilization.samples = t.gpu.metrics.memory.samples = t.gpu.samples;
  }
  return t;
}

json parity_json(const ParitySummary& p) {
  return {{"batched", p.batched},
          {"checked", p.checked},
          {"identical", p.identical},
          {"within_tolerance", p.within_tolerance},
          {"mismatched", p.mismatched},
          {"errors", p.errors},
          {"mismatched_codes", p.mismatched_codes},
          {"max_abs_diff", p.max_abs_diff},
          {"tolerance", p.tolerance},
          {"sample", p.sample}};
}

ParitySummary read_parity(const JsonFields& in, const json& j, const std::string& w) {
  ParitySummary p;
  auto count = [&](const char* k) { return static_cast<std::size_t>(in.integer(j, w, k)); };
  p.batched = count("batched");
  p.checked = count("checked");
  p.identical = count("identical");
  p.within_tolerance = count("within_tolerance");
  p.mismatched = count("mismatched");
  p.errors = count("errors");
  p.mismatched_codes = static_cast<std::uint64_t>(in.integer(j, w, "mismatched_codes"));
  p.max_abs_diff = in.num(j, w, "max_abs_diff");
  p.tolerance = in.num(j, w, "tolerance");
  p.sample = count("sample");
  return p;
}

json compute_json(const ArmCompute& a) {
  return {{"encode_threads", a.encode_threads},
          {"batch_workers", a.batch_workers},
          {"intra_op_threads", a.intra_op_threads},
          {"device", a.device}};
}

ArmCompute read_compute(const JsonFields& in, const json& j, const std::string& w) {
  ArmCompute a;
  a.encode_threads = static_cast<int>(in.integer(j, w, "encode_threads"));
  a.batch_workers = static_cast<int>(in.integer(j, w, "batch_workers"));
  a.intra_op_threads = static_cast<int>(in.integer(j, w, "intra_op_threads"));
  a.device = in.str(j, w, "device");
  return a;
}

}  // namespace

json cell_to_json(const Cell& c) {
  json stages = json::object();
  for (const auto& [stage, s] : c.stages) stages[std::string(to_string(stage))] = summary_json(stage, s);
  json outcomes = json::object();
  for (const auto& [name, n] : c.outcomes) outcomes[name] = n;
  json cache = json::object();
  for (const auto& [name, v] : c.cache) cache[name] = v;
  json out{
      {"id", c.key.id()},
      {"model", c.key.model},
      {"arm", to_string(c.key.arm)},
      {"phase", to_string(c.key.phase)},
      {"concurrency", c.key.concurrency},
      {"repeat", c.key.repeat},
      {"arrivals", c.open_loop ? "open" : "closed"},
      {"batching_active", c.batching_active},
      {"count", c.count},
      {"errors", c.errors},
      {"outcomes", outcomes},
      {"wall_s", c.wall_s},
      {"throughput_rps", c.throughput_rps},
      {"audio_seconds_per_s", c.audio_seconds_per_s},
      {"stages", stages},
      {"cache", cache},
      {"batch_size_histogram", c.batch_size_histogram},
      {"generator", {{"behind", c.generator.behind}, {"late", c.generator.late}, {"max_lag_s", c.generator.max_lag_s}}},
      {"telemetry", to_json(c.telemetry)},
      {"interrupted", c.interrupted},
      {"warnings", c.warnings}};
  if (c.parity) out["parity"] = parity_json(*c.parity);
  if (c.compute) out["compute"] = compute_json(*c.compute);
  add_noise_fields(c, out);
  if (c.reuse) {
    const CacheReuse& r = *c.reuse;
    json points = json::array();
    for (const auto& [bytes, hit] : r.points) points.push_back({{"max_bytes", bytes}, {"hit_ratio", hit}});
    out["hit_ratio"] = r.hit_ratio();
    out["mrc"] = {{"requests", r.requests},
                  {"hits", r.hits},
                  {"distinct", r.distinct},
                  {"working_set_bytes", r.working_set_bytes},
                  {"max_bytes", r.max_bytes},
                  {"max_items", r.max_items},
                  {"predicted_hit_ratio", r.predicted_hit_ratio},
                  {"points", points}};
  }
  if (c.key.threads > 0) out["threads"] = c.key.threads;  // a profiled dimension only
  return out;
}

Cell cell_from_json(const JsonFields& in, const json& j, const std::string& w) {
  if (!j.is_object()) in.fail(w, "expected an object");
  Cell c;
  c.key.model = in.str(j, w, "model", "", true);
  c.key.arm = in.label(j, w, "arm", "", parse_arm);
  c.key.phase = in.label(j, w, "phase", "", parse_phase);
  c.key.concurrency = static_cast<int>(in.integer(j, w, "concurrency", 0, true));
  c.key.repeat = static_cast<int>(in.integer(j, w, "repeat"));
  c.key.threads = static_cast<int>(in.integer(j, w, "threads"));
  std::string id = in.str(j, w, "id", c.key.id());
  if (id != c.key.id())
    in.fail(JsonFields::key(w, "id"), "'" + id + "' does not match the cell's fields (" + c.key.id() + ")");
  c.open_loop = in.str(j, w, "arrivals", "closed") == "open";
  c.batching_active = in.flag(j, w, "batching_active");
  c.count = static_cast<std::size_t>(in.integer(j, w, "count"));
  c.errors = static_cast<std::size_t>(in.integer(j, w, "errors"));
  std::string wo = JsonFields::key(w, "outcomes");
  const json& outcomes = in.obj(j, w, "outcomes");
  for (auto it = outcomes.begin(); it != outcomes.end(); ++it)
    c.outcomes[it.key()] = static_cast<std::size_t>(in.integer(outcomes, wo, it.key().c_str()));
  c.wall_s = in.num(j, w, "wall_s", 0, true);
  c.throughput_rps = in.num(j, w, "throughput_rps");
  c.audio_seconds_per_s = in.num(j, w, "audio_seconds_per_s");
  std::string ws = JsonFields::key(w, "stages");
  const json& stages = in.obj(j, w, "stages");
  for (Stage s : reported_stages()) {
    std::string name(to_string(s));
    if (const json* st = in.find(stages, name.c_str()))
      c.stages[s] = read_summary(in, *st, JsonFields::key(ws, name.c_str()));
  }
  std::string wk = JsonFields::key(w, "cache");
  const json& cache = in.obj(j, w, "cache");
  for (auto it = cache.begin(); it != cache.end(); ++it)
    c.cache[it.key()] = static_cast<std::uint64_t>(in.integer(cache, wk, it.key().c_str()));
  const json& hist = in.arr(j, w, "batch_size_histogram");
  for (std::size_t i = 0; i < hist.size(); ++i) {
    if (!hist[i].is_number())
      in.fail(JsonFields::idx(JsonFields::key(w, "batch_size_histogram"), i), "expected a number");
    c.batch_size_histogram.push_back(static_cast<std::uint64_t>(hist[i].get<double>()));
  }
  std::string wg = JsonFields::key(w, "generator");
  const json& gen = in.obj(j, w, "generator");
  c.generator.behind = in.flag(gen, wg, "behind");
  c.generator.late = static_cast<std::size_t>(in.integer(gen, wg, "late"));
  c.generator.max_lag_s = in.num(gen, wg, "max_lag_s");
  c.telemetry = read_telemetry(in, in.obj(j, w, "telemetry"), JsonFields::key(w, "telemetry"));
  if (const json* p = in.find(j, "parity")) c.parity = read_parity(in, *p, JsonFields::key(w, "parity"));
  if (const json* a = in.find(j, "compute")) c.compute = read_compute(in, *a, JsonFields::key(w, "compute"));
  c.interrupted = in.flag(j, w, "interrupted");
  read_noise_fields(in, j, w, c);
  const json& warnings = in.arr(j, w, "warnings");
  for (std::size_t i = 0; i < warnings.size(); ++i)
    c.warnings.push_back(warnings[i].is_string() ? warnings[i].get<std::string>() : warnings[i].dump());
  if (const json* m = in.find(j, "mrc")) {
    const std::string wm = JsonFields::key(w, "mrc");
    CacheReuse r;
    r.requests = static_cast<std::size_t>(in.integer(*m, wm, "requests"));
    r.hits = static_cast<std::size_t>(in.integer(*m, wm, "hits"));
    r.distinct = static_cast<std::size_t>(in.integer(*m, wm, "distinct"));
    r.working_set_bytes = static_cast<std::uint64_t>(in.integer(*m, wm, "working_set_bytes"));
    r.max_bytes = static_cast<std::uint64_t>(in.integer(*m, wm, "max_bytes"));
    r.max_items = static_cast<std::uint64_t>(in.integer(*m, wm, "max_items"));
    r.predicted_hit_ratio = in.num(*m, wm, "predicted_hit_ratio");
    const std::string wp = JsonFields::key(wm, "points");
    const json& points = in.arr(*m, wm, "points");
    for (std::size_t i = 0; i < points.size(); ++i) {
      const std::string wi = JsonFields::idx(wp, i);
      r.points.emplace_back(static_cast<std::uint64_t>(in.integer(points[i], wi, "max_bytes", 0, true)),
                            in.num(points[i], wi, "hit_ratio", 0, true));
    }
    c.reuse = r;
  }
  return c;
}

}  // namespace refenc::profile
