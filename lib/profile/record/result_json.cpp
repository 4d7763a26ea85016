// The JSON of the gate block, of compare's result, of a cell's telemetry and of requests.jsonl lines.
#include "core/error.hpp"
#include "profile/record/json_fields.hpp"
#include "profile/record/record_json.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

json interval_json(const Interval& i) { return json{{"point", i.point}, {"lo", i.lo}, {"hi", i.hi}}; }

Interval read_interval(const JsonFields& in, const json& j, const std::string& w) {
  return {in.num(j, w, "point"), in.num(j, w, "lo"), in.num(j, w, "hi")};
}

/// The gate names the synthesis stage by its end: "synthesis".
std::string_view share_name(Stage s) { return s == Stage::synthesis_end ? "synthesis" : to_string(s); }

Stage parse_share_name(std::string_view name) { return name == "synthesis" ? Stage::synthesis_end : parse_stage(name); }

json arm_json(const ArmFigures& a) {
  return {{"requests", a.requests}, {"p95_e2e_s", a.p95_e2e_s}, {"throughput_rps", a.throughput_rps}};
}

ArmFigures read_arm(const JsonFields& in, const json& j, const std::string& w) {
  return {static_cast<std::size_t>(in.integer(j, w, "requests")), in.num(j, w, "p95_e2e_s"),
          in.num(j, w, "throughput_rps")};
}

json level_json(const LevelResult& l) {
  const StageShares& s = l.shares_m4a;
  json j{{"concurrency", l.concurrency},
         {"stage_shares_m4a",
          {{"preprocessing", s.preprocessing}, {"encode", s.encode}, {"synthesis", s.synthesis}, {"queue", s.queue}}},
         {"top_stage", share_name(l.top_stage)},
         {"encode_is_top", l.top_stage == Stage::encode},
         {"p95_e2e_reduction", interval_json(l.p95_e2e_reduction)},
         {"throughput_gain", interval_json(l.throughput_gain)},
         {"m4a", arm_json(l.m4a)},
         {"m4b", arm_json(l.m4b)},
         {"outcome", to_string(l.outcome)},
         {"reason", l.reason}};
  if (l.bootstrap_go_share >= 0) j["bootstrap_go_share"] = l.bootstrap_go_share;
  return j;
}

LevelResult read_level(const JsonFields& in, const json& j, const std::string& w) {
  LevelResult l;
  l.concurrency = static_cast<int>(in.integer(j, w, "concurrency"));
  std::string ws = JsonFields::key(w, "stage_shares_m4a");
  const json& s = in.obj(j, w, "stage_shares_m4a");
  l.shares_m4a = {in.num(s, ws, "preprocessing"), in.num(s, ws, "encode"), in.num(s, ws, "synthesis"),
                  in.num(s, ws, "queue")};
  l.top_stage = in.label(j, w, "top_stage", "encode", parse_share_name);
  l.p95_e2e_reduction = read_interval(in, in.obj(j, w, "p95_e2e_reduction"), JsonFields::key(w, "p95_e2e_reduction"));
  l.throughput_gain = read_interval(in, in.obj(j, w, "throughput_gain"), JsonFields::key(w, "throughput_gain"));
  l.m4a = read_arm(in, in.obj(j, w, "m4a"), JsonFields::key(w, "m4a"));
  l.m4b = read_arm(in, in.obj(j, w, "m4b"), JsonFields::key(w, "m4b"));
  l.outcome = in.label(j, w, "outcome", "NO-GO", parse_verdict);
  l.reason = in.str(j, w, "reason");
  l.bootstrap_go_share = in.num(j, w, "bootstrap_go_share", -1);
  return l;
}

}  // namespace

json to_json(const GateReport& gate) {
  json models = json::array();
  for (const ModelVerdict& m : gate.models) {
    json out{{"model", m.model},
             {"evidence_grade", m.evidence_grade},
             {"verdict", to_string(m.verdict)},
             {"reason", m.reason}};
    if (!m.parity.empty()) out["parity"] = m.parity;
    add_stability_fields(m, out);
    if (!m.levels.empty()) {
      json per = json::array();
      for (const LevelResult& l : m.levels) per.push_back(level_json(l));
      out["concurrency"] = per;
    }
    if (m.capacity) out["capacity"] = capacity_result_json(*m.capacity);
    models.push_back(out);
  }
  const GateSpec& s = gate.options.spec;
  return json{{"options",
               {{"latency_reduction", s.latency_reduction},
                {"throughput_gain", s.throughput_gain},
                {"bootstrap_resamples", s.bootstrap_resamples},
                {"confidence", s.confidence},
                {"seed", gate.options.seed},
                {"method",
                 "percentile bootstrap over requests of the cold cells, pooled over repeats; "
                 "nearest-rank percentiles"}}},
              {"models", models},
              {"exit_code", gate.exit_code}};
}

GateReport gate_from_json(const JsonFields& in, const json& j) {
  const std::string w = "gate";
  if (!j.is_object()) in.fail(w, "expected an object");
  GateReport g;
  const json& o = in.obj(j, w, "options");
  const std::string wo = "gate.options";
  GateSpec d;
  g.options.spec.latency_reduction = in.num(o, wo, "latency_reduction", d.latency_reduction);
  g.options.spec.throughput_gain = in.num(o, wo, "throughput_gain", d.throughput_gain);
  g.options.spec.bootstrap_resamples =
      static_cast<int>(in.integer(o, wo, "bootstrap_resamples", d.bootstrap_resamples));
  g.options.spec.confidence = in.num(o, wo, "confidence", d.confidence);
  g.options.seed = static_cast<std::uint64_t>(in.integer(o, wo, "seed", 1));
  g.exit_code = static_cast<int>(in.integer(j, w, "exit_code"));
  const json& models = in.arr(j, w, "models");
  for (std::size_t i = 0; i < models.size(); ++i) {
    std::string wm = JsonFields::idx("gate.models", i);
    const json& mj = models[i];
    if (!mj.is_object()) in.fail(wm, "expected an object");
    ModelVerdict m;
    m.model = in.str(mj, wm, "model", "", true);
    m.evidence_grade = in.str(mj, wm, "evidence_grade", "unknown");
    m.verdict = in.label(mj, wm, "verdict", "", parse_verdict);
    m.reason = in.str(mj, wm, "reason");
    m.parity = in.str(mj, wm, "parity");
    read_stability_fields(in, mj, wm, m);
    const json& per = in.arr(mj, wm, "concurrency");
    for (std::size_t k = 0; k < per.size(); ++k)
      m.levels.push_back(read_level(in, per[k], JsonFields::idx(JsonFields::key(wm, "concurrency"), k)));
    if (const json* c = in.find(mj, "capacity"))
      m.capacity = capacity_result_from_json(in, *c, JsonFields::key(wm, "capacity"));
    g.models.push_back(std::move(m));
  }
  return g;
}

json to_json(const TelemetrySummary& t) {
  json c{{"available", t.cpu.available}, {"cores", t.cpu.cores}};
  if (t.cpu.available) {
    c["process_cores_mean"] = t.cpu.process_mean;
    c["process_cores_max"] = t.cpu.process_max;
    c["system_util_mean"] = t.cpu.system_mean;
    c["system_util_max"] = t.cpu.system_max;
  } else {
    c["reason"] = t.cpu.reason;
  }
  json g{{"available", t.gpu.available}};
  if (t.gpu.available) {
    const GpuSummary& gs = t.gpu;
    g["name"] = gs.name;
    g["samples"] = gs.samples;
    if (gs.metrics.utilization.samples > 0) {
      g["util_percent_mean"] = gs.util_mean;
      g["util_percent_max"] = gs.util_max;
    }
    if (gs.metrics.memory.samples > 0) {
      g["memory_used_max_mib"] = gs.memory_used_max_mib;
      g["memory_total_mib"] = gs.memory_total_mib;
    }
    if (gs.metrics.power.samples > 0) {
      g["power_w_mean"] = gs.power_mean_w;
      g["power_w_max"] = gs.power_max_w;
    }
    if (!gs.energy_method.empty()) {
      g["energy_j"] = gs.energy_j;
      g["energy_method"] = gs.energy_method;
      g["encodes"] = gs.encodes;
      if (gs.encodes > 0) g["energy_per_encode_j"] = gs.energy_per_encode_j;
    }
    auto metric = [](const GpuMetricStatus& m) {
      json o{{"samples", m.samples}, {"failures", m.failures}};
      if (!m.unavailable.empty()) o["unavailable"] = m.unavailable;
      return o;
    };
    g["metrics"] = {{"utilization", metric(gs.metrics.utilization)},
                    {"memory", metric(gs.metrics.memory)},
                    {"power", metric(gs.metrics.power)},
                    {"energy", metric(gs.metrics.energy)}};
  } else {
    g["reason"] = t.gpu.reason;
  }
  return {{"cpu", c}, {"gpu", g}};
}

std::string_view to_string(CompareMetric m) noexcept {
  switch (m) {
    case CompareMetric::p50_preprocessing: return "p50_preprocessing";
    case CompareMetric::p95_e2e: return "p95_e2e";
    case CompareMetric::p95_encode: return "p95_encode";
    case CompareMetric::throughput: return "throughput";
  }
  return "?";
}

json to_json(const CompareResult& r) {
  json cells = json::array();
  for (const CellChange& c : r.cells) {
    json metrics = json::object();
    for (const MetricChange& m : c.metrics) {
      json mj{{"baseline", m.baseline},
              {"current", m.current},
              {"change", interval_json(m.change)},
              {"regression", m.regression},
              {"baseline_runs", m.baseline_runs},
              {"current_runs", m.current_runs},
              {"noise_floor", m.noise_floor},
              {"noise_source", m.noise_source}};
      if (m.p_value >= 0) mj["u_test_p"] = m.p_value;
      metrics[std::string(to_string(m.metric))] = mj;
    }
    cells.push_back({{"cell", c.group.label()},
                     {"metrics", metrics},
                     {"regression", c.regression},
                     {"contaminated", c.contaminated}});
  }
  RunRecord evidence;
  evidence.models = r.baseline_evidence;
  json unmatched = json::array();
  for (const GroupKey& u : r.unmatched) unmatched.push_back(u.label());
  return {{"threshold", r.threshold},
          {"cells", cells},
          {"unmatched", unmatched},
          {"regressions", r.regressions},
          {"matched", r.matched},
          {"baseline", r.baseline_dir},
          {"current", r.current_dir},
          {"baseline_evidence", to_json(evidence)["models"]},
          {"method", r.method},
          {"baseline_runs", r.baseline_dirs},
          {"current_runs", r.current_dirs},
          {"u_test", {{"alpha", r.alpha}, {"min_runs_each_side", r.min_runs_for_test}}},
          {"min_latency_change_s", r.min_change_s},
          {"contaminated", r.contaminated},
          {"judge_contaminated", r.judge_contaminated}};
}

json to_json(const RequestRecord& r) {
  json j{{"index", r.index},
         {"reference", r.reference},
         {"ref_seconds", r.ref_seconds},
         {"text_tokens", r.text_tokens},
         {"scheduled_s", r.scheduled_s},
         {"queue_s", r.queue_s},
         {"preprocessing_s", r.preprocessing_s},
         {"encode_s", r.encode_s},
         {"synthesis_first_s", r.synthesis_first_s},
         {"synthesis_end_s", r.synthesis_end_s},
         {"ttfa_s", r.ttfa_s},
         {"e2e_s", r.e2e_s},
         {"audio_seconds", r.audio_seconds},
         {"outcome", r.outcome},
         {"batch_size", r.batch_size}};
  if (r.batch_size > 0) j["batch_padding"] = r.batch_padding;
  if (r.batch_id > 0) j["batch_id"] = r.batch_id;
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.parity.empty()) {
    j["parity"] = {
        {"status", r.parity}, {"mismatched_codes", r.parity_mismatched_codes}, {"max_abs_diff", r.parity_max_abs_diff}};
    if (!r.parity_error.empty()) j["parity"]["error"] = r.parity_error;
  }
  if (!r.key.empty()) j["key"] = r.key;
  if (r.stored_bytes > 0) j["stored_bytes"] = r.stored_bytes;
  if (r.worker >= 0) j["worker"] = r.worker;
  if (r.rate_step >= 0) j["rate_step"] = r.rate_step, j["rate_per_s"] = r.rate_per_s;
  if (r.batch_workers >= 0)
    j["compute"] = {{"batch_workers", r.batch_workers}, {"intra_op_threads", r.intra_op_threads}};
  if (r.aa) j["aa"] = true;
  if (r.contaminated) j["contaminated"] = true;
  if (r.attempt > 0) j["attempt"] = r.attempt;
  return j;
}

std::pair<std::string, RequestRecord> request_from_json(const json& j, const std::string& where) {
  JsonFields in(where);
  if (!j.is_object()) in.fail("", "not a JSON object");
  std::string cell = in.str(j, "", "cell", "", true);
  RequestRecord r;
  r.index = static_cast<std::size_t>(in.integer(j, "", "index"));
  r.reference = in.str(j, "", "reference");
  r.ref_seconds = in.num(j, "", "ref_seconds");
  r.text_tokens = static_cast<int>(in.integer(j, "", "text_tokens"));
  r.scheduled_s = in.num(j, "", "scheduled_s");
  r.queue_s = in.num(j, "", "queue_s");
  r.preprocessing_s = in.num(j, "", "preprocessing_s");
  r.encode_s = in.num(j, "", "encode_s");
  r.synthesis_first_s = in.num(j, "", "synthesis_first_s");
  r.synthesis_end_s = in.num(j, "", "synthesis_end_s");
  r.ttfa_s = in.num(j, "", "ttfa_s");
  r.e2e_s = in.num(j, "", "e2e_s");
  r.audio_seconds = in.num(j, "", "audio_seconds");
  r.outcome = in.str(j, "", "outcome", "", true);
  r.batch_size = static_cast<int>(in.integer(j, "", "batch_size"));
  r.batch_padding = in.num(j, "", "batch_padding");
  r.batch_id = static_cast<std::uint64_t>(in.integer(j, "", "batch_id"));
  r.error = in.str(j, "", "error");
  if (const json* p = in.find(j, "parity")) {
    r.parity = in.str(*p, "parity", "status", "", true);
    r.parity_mismatched_codes = static_cast<std::uint64_t>(in.integer(*p, "parity", "mismatched_codes"));
    r.parity_max_abs_diff = in.num(*p, "parity", "max_abs_diff");
    r.parity_error = in.str(*p, "parity", "error");
  }
  r.key = in.str(j, "", "key");
  r.stored_bytes = static_cast<std::uint64_t>(in.integer(j, "", "stored_bytes"));
  r.worker = static_cast<int>(in.integer(j, "", "worker", -1));
  r.rate_step = static_cast<int>(in.integer(j, "", "rate_step", -1));
  r.rate_per_s = in.num(j, "", "rate_per_s");
  if (const json* c = in.find(j, "compute")) {
    r.batch_workers = static_cast<int>(in.integer(*c, "compute", "batch_workers"));
    r.intra_op_threads = static_cast<int>(in.integer(*c, "compute", "intra_op_threads"));
  }
  r.aa = in.flag(j, "", "aa");
  r.contaminated = in.flag(j, "", "contaminated");
  r.attempt = static_cast<int>(in.integer(j, "", "attempt"));
  return {std::move(cell), std::move(r)};
}

}  // namespace refenc::profile
