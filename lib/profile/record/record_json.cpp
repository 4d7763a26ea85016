#include "profile/record/record_json.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "profile/record/json_fields.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

constexpr const char* schema_name = "refenc-profile-report";

json synthesis_json(const SynthesisSpec& s) {
  return json{{"source", s.source},
              {"prefill_base_ms", s.prefill_base_ms},
              {"prefill_per_ref_frame_ms", s.prefill_per_ref_frame_ms},
              {"prefill_per_text_token_ms", s.prefill_per_text_token_ms},
              {"step_base_ms", s.step_base_ms},
              {"step_per_active_ms", s.step_per_active_ms},
              {"steps_to_first_audio", s.steps_to_first_audio},
              {"steps_per_audio_second", s.steps_per_audio_second},
              {"audio_seconds_per_text_token", s.audio_seconds_per_text_token},
              {"chars_per_text_token", s.chars_per_text_token}};
}

json encoder_json(const EncoderSpec& e) {
  json j{
      {"scale", e.scale}, {"dtype", e.dtype}, {"device", e.device}, {"module", e.module_path}, {"threads", e.threads}};
  if (!e.checkpoint.empty()) j["checkpoint"] = e.checkpoint;                 // absent: no checkpoint
  if (e.parity_tolerance != 0) j["parity_tolerance"] = e.parity_tolerance;  // absent: 0, bit-exact
  if (!e.calibration.empty()) j["calibration"] = e.calibration;             // absent: not a modelled device
  if (!e.python.empty()) {                                                    // absent: refenc's own encoder
    j["python"] = e.python;
    j["python_path"] = e.python_path;
    j["python_args"] = json::parse(e.python_args);
  }
  return j;
}

json model_json(const ModelEntry& m) {
  return json{{"name", m.name},
              {"scale", m.scale},
              {"evidence_grade", m.evidence_grade},
              {"real_weights", m.real_weights},
              {"sample_rate", m.sample_rate},
              {"frame_rate", m.frame_rate},
              {"can_encode_batch", m.can_encode_batch},
              {"has_internal_batching", m.has_internal_batching},
              {"eligibility", {{"eligible", m.eligibility.eligible}, {"reason", m.eligibility.reason}}},
              {"encoder", encoder_json(m.encoder)},
              {"synthesis", synthesis_json(m.synthesis)}};
}

/// A model's JSON with its modelled device's calibration when it has one.
json model_with_calibration_json(const ModelEntry& m) {
  json j = model_json(m);
  if (const auto& c = m.calibration)
    j["calibration"] = {{"name", c->name},     {"path", c->path}, {"sha256", c->sha256},
                        {"origin", c->origin}, {"host", c->host}, {"device_name", c->device_name},
                        {"source", c->source}};
  return j;
}

json library_json(const LibraryContext& l) {
  if (!l.reason.empty()) return {{"version", l.version}, {"reason", l.reason}};
  json j{{"version", l.version},
         {"blas", l.blas},
         {"intra_op_threads", l.intra_op_threads},
         {"parallel_info", l.parallel_info}};
  if (l.blas_threads > 0) j["blas_threads"] = l.blas_threads;  // absent in reports from before they were recorded
  if (!l.allocator.empty()) j["allocator"] = l.allocator;  // absent in reports from before it was recorded
  return j;
}

json context_json(const RunContext& c) {
  json j{{"host", c.host},
         {"cpu_model", c.cpu_model},
         {"cores", c.cores},
         {"git_revision", c.git_revision},
         {"manifest_path", c.manifest_path},
         {"manifest_sha256", c.manifest_sha256},
         {"seed", c.seed},
         {"started_utc", c.started_utc}};
  if (c.libtorch) j["libtorch"] = library_json(*c.libtorch);
  json enc = json::array();
  for (const auto& e : c.encoders)
    enc.push_back({{"model", e.model}, {"scale", e.scale}, {"real_weights", e.real_weights}, {"evidence", e.evidence}});
  j["encoders"] = enc;
  if (!c.shared_cache.empty()) j["shared_cache"] = c.shared_cache;
  return j;
}

json gate_spec_json(const GateSpec& g) {
  return {{"latency_reduction", g.latency_reduction},
          {"throughput_gain", g.throughput_gain},
          {"bootstrap_resamples", g.bootstrap_resamples},
          {"confidence", g.confidence}};
}

// ---------------------------------------------------------------------------------------------------
// Reading.

ModelEntry read_model(const JsonFields& in, const json& j, const std::string& w) {
  if (!j.is_object()) in.fail(w, "expected an object");
  ModelEntry m;
  m.name = in.str(j, w, "name", "", true);
  m.scale = in.str(j, w, "scale");
  m.evidence_grade = in.str(j, w, "evidence_grade", "unknown");
  m.real_weights = in.flag(j, w, "real_weights");
  m.sample_rate = static_cast<int>(in.integer(j, w, "sample_rate"));
  m.frame_rate = in.num(j, w, "frame_rate");
  m.can_encode_batch = in.flag(j, w, "can_encode_batch");
  m.has_internal_batching = in.flag(j, w, "has_internal_batching");
  std::string we = JsonFields::key(w, "eligibility");
  const json& el = in.obj(j, w, "eligibility");
  m.eligibility.eligible = in.flag(el, we, "eligible");
  m.eligibility.reason =
      in.str(el, we, "reason", m.eligibility.eligible ? "" : "not eligible for different-key batching");
  std::string wn = JsonFields::key(w, "encoder");
  const json& enc = in.obj(j, w, "encoder");
  EncoderSpec de;
  m.encoder.scale = in.str(enc, wn, "scale", de.scale);
  m.encoder.dtype = in.str(enc, wn, "dtype", de.dtype);
  m.encoder.device = in.str(enc, wn, "device", de.device);
  m.encoder.module_path = in.str(enc, wn, "module");
  m.encoder.checkpoint = in.str(enc, wn, "checkpoint");
  m.encoder.threads = static_cast<int>(in.integer(enc, wn, "threads"));
  m.encoder.parity_tolerance = in.num(enc, wn, "parity_tolerance");
  m.encoder.calibration = in.str(enc, wn, "calibration");
  m.encoder.python = in.str(enc, wn, "python");
  if (const json* pp = in.find(enc, "python_path"); pp && pp->is_array())
    for (const json& dir : *pp)
      if (dir.is_string()) m.encoder.python_path.push_back(dir.get<std::string>());
  if (const json* pa = in.find(enc, "python_args"); pa && pa->is_object()) m.encoder.python_args = pa->dump();
  if (const json* c = in.find(j, "calibration"); c && c->is_object()) {
    std::string wc = JsonFields::key(w, "calibration");
    m.calibration = CalibrationRef{in.str(*c, wc, "name"),   in.str(*c, wc, "path"), in.str(*c, wc, "sha256"),
                                   in.str(*c, wc, "origin"), in.str(*c, wc, "host"), in.str(*c, wc, "device_name"),
                                   in.str(*c, wc, "source")};
  }
  std::string wy = JsonFields::key(w, "synthesis");
  const json& sy = in.obj(j, w, "synthesis");
  SynthesisSpec d;
  SynthesisSpec& s = m.synthesis;
  s.source = in.str(sy, wy, "source");
  s.prefill_base_ms = in.num(sy, wy, "prefill_base_ms", d.prefill_base_ms);
  s.prefill_per_ref_frame_ms = in.num(sy, wy, "prefill_per_ref_frame_ms", d.prefill_per_ref_frame_ms);
  s.prefill_per_text_token_ms = in.num(sy, wy, "prefill_per_text_token_ms", d.prefill_per_text_token_ms);
  s.step_base_ms = in.num(sy, wy, "step_base_ms", d.step_base_ms);
  s.step_per_active_ms = in.num(sy, wy, "step_per_active_ms", d.step_per_active_ms);
  s.steps_to_first_audio = static_cast<int>(in.integer(sy, wy, "steps_to_first_audio", d.steps_to_first_audio));
  s.steps_per_audio_second = in.num(sy, wy, "steps_per_audio_second", d.steps_per_audio_second);
  s.audio_seconds_per_text_token = in.num(sy, wy, "audio_seconds_per_text_token", d.audio_seconds_per_text_token);
  s.chars_per_text_token = in.num(sy, wy, "chars_per_text_token", d.chars_per_text_token);
  return m;
}

RunContext read_context(const JsonFields& in, const json& j) {
  const std::string w = "context";
  RunContext c;
  c.host = in.str(j, w, "host");
  c.cpu_model = in.str(j, w, "cpu_model");
  c.cores = static_cast<unsigned>(in.integer(j, w, "cores"));
  if (const json* l = in.find(j, "libtorch"); l && l->is_object()) {
    std::string wl = JsonFields::key(w, "libtorch");
    LibraryContext lc;
    lc.version = in.str(*l, wl, "version");
    lc.blas = in.str(*l, wl, "blas");
    lc.intra_op_threads = static_cast<int>(in.integer(*l, wl, "intra_op_threads"));
    lc.blas_threads = static_cast<int>(in.integer(*l, wl, "blas_threads"));
    lc.allocator = in.str(*l, wl, "allocator");  // fields older reports have and this one lacks are ignored
    lc.parallel_info = in.str(*l, wl, "parallel_info");
    lc.reason = in.str(*l, wl, "reason");
    c.libtorch = lc;
  }
  c.git_revision = in.str(j, w, "git_revision");
  c.manifest_path = in.str(j, w, "manifest_path");
  c.manifest_sha256 = in.str(j, w, "manifest_sha256");
  c.seed = static_cast<std::uint64_t>(in.integer(j, w, "seed", 1));
  c.started_utc = in.str(j, w, "started_utc");
  c.shared_cache = in.str(j, w, "shared_cache");
  const json& enc = in.arr(j, w, "encoders");
  for (std::size_t i = 0; i < enc.size(); ++i) {
    std::string we = JsonFields::idx(JsonFields::key(w, "encoders"), i);
    c.encoders.push_back({in.str(enc[i], we, "model"), in.str(enc[i], we, "scale"), in.str(enc[i], we, "evidence"),
                          in.flag(enc[i], we, "real_weights")});
  }
  return c;
}

/// Concurrency levels per phase, as the manifest's parser resolves them: a phase's own list, else the
/// manifest's, else the default.
std::map<Phase, std::vector<int>> manifest_levels(const JsonFields& in, const json& content) {
  std::map<Phase, std::vector<int>> levels;
  if (!content.is_object()) return levels;
  auto list = [&](const json& arr, const std::string& w) {
    std::vector<int> v;
    if (!arr.is_array()) in.fail(w, "expected an array");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_number_integer()) in.fail(JsonFields::idx(w, i), "expected an integer");
      v.push_back(arr[i].get<int>());
    }
    return v;
  };
  std::vector<int> all = default_concurrency_levels();
  if (const json* c = in.find(content, "concurrency")) all = list(*c, "manifest.content.concurrency");
  const json& phases = in.arr(content, "manifest.content", "phases");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    std::string w = JsonFields::idx("manifest.content.phases", i);
    Phase phase = in.label(phases[i], w, "kind", "", parse_phase);
    const json* c = in.find(phases[i], "concurrency");
    auto& into = levels[phase];
    for (int level : c ? list(*c, JsonFields::key(w, "concurrency")) : all)
      if (std::find(into.begin(), into.end(), level) == into.end()) into.push_back(level);
  }
  return levels;
}

ManifestSummary read_manifest(const JsonFields& in, const json& j) {
  const std::string w = "manifest";
  ManifestSummary m;
  m.name = in.str(j, w, "name");
  m.path = in.str(j, w, "path");
  m.sha256 = in.str(j, w, "sha256");
  m.seed = static_cast<std::uint64_t>(in.integer(j, w, "seed", 1));
  const json& g = in.obj(j, w, "gate");
  GateSpec d;
  m.gate.latency_reduction = in.num(g, "manifest.gate", "latency_reduction", d.latency_reduction);
  m.gate.throughput_gain = in.num(g, "manifest.gate", "throughput_gain", d.throughput_gain);
  m.gate.bootstrap_resamples =
      static_cast<int>(in.integer(g, "manifest.gate", "bootstrap_resamples", d.bootstrap_resamples));
  m.gate.confidence = in.num(g, "manifest.gate", "confidence", d.confidence);
  if (const json* c = in.find(j, "content")) {
    m.content = *c;
    m.levels = manifest_levels(in, *c);
  }
  return m;
}

}  // namespace

json to_json(const RunRecord& run) {
  json stage_kinds = json::object();
  for (Stage s : reported_stages()) stage_kinds[std::string(to_string(s))] = stage_kind(s);
  json models = json::array(), cells = json::array(), skipped = json::array();
  for (const auto& m : run.models) models.push_back(model_with_calibration_json(m));
  for (const auto& c : run.cells) cells.push_back(cell_to_json(c));
  for (const auto& s : run.skipped)
    skipped.push_back({{"model", s.model}, {"arm", to_string(s.arm)}, {"reason", s.reason}});
  json j{{"schema", schema_name},
         {"schema_version", report_schema_version},
         {"status", run.status},
         {"context", context_json(run.context)},
         {"manifest",
          {{"name", run.manifest.name},
           {"path", run.manifest.path},
           {"sha256", run.manifest.sha256},
           {"seed", run.manifest.seed},
           {"gate", gate_spec_json(run.manifest.gate)},
           {"content", run.manifest.content}}},
         {"percentile_method", percentile_method()},
         {"stage_kinds", stage_kinds},
         {"models", models},
         {"cells", cells},
         {"skipped", skipped},
         {"wall_s", run.wall_s}};
  if (run.gate) j["gate"] = to_json(*run.gate);
  if (run.capacity) j["capacity"] = capacity_to_json(*run.capacity);
  if (run.noise) {
    json aa = json::array();
    for (const auto& c : run.aa_cells) aa.push_back(cell_to_json(c));
    j["aa_cells"] = aa;
    j["noise"] = noise_json(*run.noise);
  }
  return j;
}

RunRecord run_from_json(const json& report, const std::string& where) {
  JsonFields in(where);
  if (!report.is_object() || in.str(report, "", "schema") != schema_name)
    throw Error(ErrorKind::bad_input, where + ": not a refenc profile report (schema field)");
  RunRecord run;
  run.schema_version = static_cast<int>(in.integer(report, "", "schema_version", 1));
  if (run.schema_version != 1)
    in.fail("schema_version", std::to_string(run.schema_version) + " is not a version this refenc reads (1)");
  run.status = in.str(report, "", "status");
  run.wall_s = in.num(report, "", "wall_s");
  run.context = read_context(in, in.obj(report, "", "context"));
  run.manifest = read_manifest(in, in.obj(report, "", "manifest"));
  const json& models = in.arr(report, "", "models");
  for (std::size_t i = 0; i < models.size(); ++i)
    run.models.push_back(read_model(in, models[i], JsonFields::idx("models", i)));
  const json& cells = in.arr(report, "", "cells");
  for (std::size_t i = 0; i < cells.size(); ++i)
    run.cells.push_back(cell_from_json(in, cells[i], JsonFields::idx("cells", i)));
  const json& skipped = in.arr(report, "", "skipped");
  for (std::size_t i = 0; i < skipped.size(); ++i) {
    std::string w = JsonFields::idx("skipped", i);
    run.skipped.push_back({in.str(skipped[i], w, "model"), in.label(skipped[i], w, "arm", "", parse_arm),
                           in.str(skipped[i], w, "reason")});
  }
  if (const json* g = in.find(report, "gate"); g && !g->is_null()) run.gate = gate_from_json(in, *g);
  if (const json* c = in.find(report, "capacity")) run.capacity = capacity_from_json(in, *c);
  const json& aa = in.arr(report, "", "aa_cells");
  for (std::size_t i = 0; i < aa.size(); ++i)
    run.aa_cells.push_back(cell_from_json(in, aa[i], JsonFields::idx("aa_cells", i)));
  if (const json* n = in.find(report, "noise"); n && !n->is_null()) run.noise = read_noise(in, *n);
  return run;
}

std::vector<std::pair<std::string, std::string>> context_rows(const RunContext& context) {
  std::vector<std::pair<std::string, std::string>> rows;
  auto flatten = [&](auto&& self, const json& j, const std::string& prefix) -> void {
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it)
        self(self, it.value(), prefix.empty() ? it.key() : prefix + "." + it.key());
    } else {
      rows.emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
    }
  };
  flatten(flatten, context_json(context), "");
  return rows;
}

std::vector<std::pair<std::string, std::string>> gate_spec_rows(const GateSpec& spec) {
  std::vector<std::pair<std::string, std::string>> rows;
  json g = gate_spec_json(spec);
  for (auto it = g.begin(); it != g.end(); ++it) rows.emplace_back("gate." + it.key(), it.value().dump());
  return rows;
}

std::string encoder_text(const EncoderSpec& encoder) {
  std::string text;
  json e = encoder_json(encoder);
  for (auto it = e.begin(); it != e.end(); ++it)
    text += (text.empty() ? "" : ", ") + it.key() + " " + (it->is_string() ? it->get<std::string>() : it->dump());
  return text;
}

std::string manifest_text(const ManifestSummary& manifest) {
  return manifest.content.is_null() ? "" : manifest.content.dump(2);
}

const std::string& percentile_method() {
  static const std::string m = "nearest rank: the sample at 1-based rank ceil(p/100 * n) of the sorted samples";
  return m;
}

}  // namespace refenc::profile
