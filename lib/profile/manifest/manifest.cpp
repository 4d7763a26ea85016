#include "profile/manifest/manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "profile/manifest/noise_manifest.hpp"
#include "profile/device/calibration_presets.hpp"
#include "profile/manifest/manifest_reader.hpp"
#include "profile/manifest/reference_schedule.hpp"
#include "profile/manifest/shared_cache_value.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

using Reader = ManifestReader;

std::vector<int> concurrency_list(const Reader& r, const json& arr, const std::string& where) {
  if (!arr.is_array()) r.fail(where, "must be an array");
  if (arr.empty()) r.fail(where, "must not be empty");
  std::vector<int> out;
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(static_cast<int>(r.int_value(arr[i], Reader::idx(where, i), 1, 1024)));
  return out;
}

/// The lines of a request trace file: {"t": seconds, "reference": "id"} per line, t non-decreasing.
std::vector<TraceLine> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::bad_input, path + ": cannot open request trace");
  std::vector<TraceLine> lines;
  std::string text;
  for (std::size_t n = 1; std::getline(in, text); ++n) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Reader r(path + ":" + std::to_string(n));
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      r.fail("", std::string("not valid JSON: ") + e.what());
    }
    r.object(j, "", {"t", "reference"});
    if (!r.find(j, "t")) r.fail("t", "required");
    TraceLine line{r.num(j, "", "t", 0, 0, 1e9), r.str(j, "", "reference", std::nullopt, true)};
    if (!lines.empty() && line.t < lines.back().t) r.fail("t", "must not go back in time");
    lines.push_back(std::move(line));
  }
  if (lines.empty()) throw Error(ErrorKind::bad_input, path + ": request trace has no lines");
  return lines;
}

/// An encoder's "calibration" field: required with device "modelled", refused without it.
void read_modelled_device(const Reader& r, const json& e, const std::string& we, const std::string& path,
                          const std::string& model, EncoderSpec& enc) {
  enc.calibration = r.str(e, we, "calibration", "");
  try {
    check_modelled_encoder(model, enc, std::filesystem::path(path).parent_path().string());
  } catch (const Error& x) {
    r.fail(Reader::key(we, enc.calibration.empty() ? "device" : "calibration"), x.what());
  }
}

/// An encoder's "python", "python_path" and "python_args" (a Python hook factory, docs/python.md).
void read_python_hook(const Reader& r, const json& e, const std::string& we, const std::string& path,
                      EncoderSpec& enc) {
  enc.python = r.str(e, we, "python", "");
  if (enc.python.empty()) {
    for (const char* field : {"python_path", "python_args"})
      if (r.find(e, field)) r.fail(Reader::key(we, field), "needs \"python\"");
    return;
  }
  static const std::regex form(R"(^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$)");
  if (!std::regex_match(enc.python, form))
    r.fail(Reader::key(we, "python"), "'" + enc.python + "' is not \"module:factory\" (e.g. \"my_hooks:make_hook\")");
  for (const char* field : {"module", "checkpoint", "calibration"})
    if (r.find(e, field)) r.fail(Reader::key(we, field), "a Python hook loads its own model (drop it or \"python\")");
  if (enc.device != "cpu") r.fail(Reader::key(we, "device"), "a Python hook places its own model (leave \"cpu\")");
  const std::filesystem::path base = std::filesystem::absolute(std::filesystem::path(path).parent_path());
  if (const json* pp = r.find(e, "python_path")) {
    const std::string wp = Reader::key(we, "python_path");
    if (!pp->is_array()) r.fail(wp, "must be an array of folders");
    for (std::size_t k = 0; k < pp->size(); ++k) {
      const json& dir = (*pp)[k];
      if (!dir.is_string() || dir.get<std::string>().empty()) r.fail(Reader::idx(wp, k), "must be a folder name");
      const std::filesystem::path folder = (base / dir.get<std::string>()).lexically_normal();
      if (!std::filesystem::is_directory(folder)) r.fail(Reader::idx(wp, k), "'" + folder.string() + "' is not a folder");
      enc.python_path.push_back(folder.string());
    }
  }
  if (const json* pa = r.find(e, "python_args")) {
    if (!pa->is_object()) r.fail(Reader::key(we, "python_args"), "must be an object (the factory's keyword arguments)");
    enc.python_args = pa->dump();
  }
}

/// A synthesis block {"preset": NAME}: fills `out` from the preset and returns true; false otherwise.
bool apply_synthesis_preset(const Reader& r, const json& s, const std::string& ws, SynthesisSpec& out) {
  if (!s.is_object() || !r.find(s, "preset")) return false;
  r.object(s, ws, {"preset"});
  std::string name = r.str(s, ws, "preset", std::nullopt, true);
  try {
    out = synthesis_preset(name);
  } catch (const Error& x) {
    r.fail(Reader::key(ws, "preset"), x.what());
  }
  return true;
}

}  // namespace

int Manifest::never_seen_references() const {
  int n = 0;
  for (const auto& p : phases) n = std::max(n, never_seen_count(references, p));
  return n;
}

int Manifest::measured_references() const {
  int n = 0;
  for (const auto& p : phases) n = std::max(n, p.distinct);
  return n;
}

int Manifest::available_references() const {
  return references.variants > 0 ? references.variants : static_cast<int>(references.clips.size());
}

int Manifest::warmup_references() const {
  if (references.warmup != warmup_concurrency) return references.warmup;
  int largest = 0;
  for (const PhaseSpec& ph : phases)
    for (int c : ph.concurrency) largest = std::max(largest, c);
  return std::max(0, std::min(largest, available_references() - measured_references() - never_seen_references()));
}

Manifest parse_manifest(const json& j, const std::string& path) {
  Reader r(path);
  r.object(j, "",
           {"schema_version", "name", "description", "seed", "models", "references", "texts", "phases", "concurrency",
            "arms", "repeats", "requests", "arrivals", "gate", "cache", "capacity", "aa", "contamination", "stopping"});
  Manifest m;
  m.path = path;
  m.raw = j;
  if (r.integer(j, "", "schema_version", 1, 1, 1) != 1) r.fail("schema_version", "must be 1");
  m.name = r.str(j, "", "name", std::nullopt, true);
  m.seed = static_cast<std::uint64_t>(r.integer(j, "", "seed", 1, 0, (1LL << 53)));
  m.repeats = static_cast<int>(r.integer(j, "", "repeats", 1, 1, 100));
  int default_requests = static_cast<int>(r.integer(j, "", "requests", PhaseSpec{}.requests, 1, 100000));
  std::vector<int> default_conc = default_concurrency_levels();
  if (const json* c = r.find(j, "concurrency")) default_conc = concurrency_list(r, *c, "concurrency");

  const json& models = r.array(j, "", "models", true);
  std::set<std::string> names;
  for (std::size_t i = 0; i < models.size(); ++i) {
    std::string w = Reader::idx("models", i);
    const json& mj = models[i];
    r.object(mj, w, {"name", "encoder", "synthesis"});
    ModelSpec ms;
    ms.name = r.str(mj, w, "name", std::nullopt, true);
    if (!names.insert(ms.name).second) r.fail(Reader::key(w, "name"), "duplicate model '" + ms.name + "'");
    if (const json* e = r.find(mj, "encoder")) {
      std::string we = Reader::key(w, "encoder");
      r.object(*e, we,
               {"scale", "dtype", "device", "module", "checkpoint", "threads", "parity_tolerance", "calibration", "python",
                "python_path", "python_args"});
      ms.encoder.checkpoint = r.str(*e, we, "checkpoint", "");
      // A checkpoint holds the published dimensions unless the manifest names another scale.
      ms.encoder.scale = r.str(*e, we, "scale", ms.encoder.checkpoint.empty() ? ms.encoder.scale : "full", true);
      ms.encoder.dtype = r.str(*e, we, "dtype", ms.encoder.dtype, true);
      if (ms.encoder.dtype != "float32" && ms.encoder.dtype != "float16" && ms.encoder.dtype != "bfloat16")
        r.fail(Reader::key(we, "dtype"), "must be float32, float16 or bfloat16");
      ms.encoder.device = r.str(*e, we, "device", ms.encoder.device, true);
      ms.encoder.module_path = r.str(*e, we, "module", "");
      if (!ms.encoder.module_path.empty() && !ms.encoder.checkpoint.empty())
        r.fail(Reader::key(we, "checkpoint"), "a module and a checkpoint exclude each other (give one)");
      if (const json* t = r.find(*e, "threads"); t && t->is_array()) {
        const std::string wt = Reader::key(we, "threads");
        if (t->empty()) r.fail(wt, "must not be empty");
        for (std::size_t k = 0; k < t->size(); ++k) {
          int level = static_cast<int>(r.int_value((*t)[k], Reader::idx(wt, k), 1, 1024));
          if (std::find(ms.thread_levels.begin(), ms.thread_levels.end(), level) != ms.thread_levels.end())
            r.fail(Reader::idx(wt, k), "duplicate thread count " + std::to_string(level));
          ms.thread_levels.push_back(level);
        }
        ms.encoder.threads = ms.thread_levels.front();
      } else {
        ms.encoder.threads = static_cast<int>(r.integer(*e, we, "threads", ms.encoder.threads, 0, 1024));
      }
      ms.encoder.parity_tolerance = r.num(*e, we, "parity_tolerance", 0, 0, 1e9);
      read_modelled_device(r, *e, we, path, ms.name, ms.encoder);
      read_python_hook(r, *e, we, path, ms.encoder);
    }
    const json* s = r.find(mj, "synthesis");
    if (!s) r.fail(Reader::key(w, "synthesis"), "required");
    std::string ws = Reader::key(w, "synthesis");
    if (apply_synthesis_preset(r, *s, ws, ms.synthesis)) {
      m.models.push_back(std::move(ms));
      continue;
    }
    r.object(*s, ws,
             {"source", "prefill_base_ms", "prefill_per_ref_frame_ms", "prefill_per_text_token_ms", "step_base_ms",
              "step_per_active_ms", "steps_to_first_audio", "steps_per_audio_second", "audio_seconds_per_text_token",
              "chars_per_text_token"});
    auto& sy = ms.synthesis;
    sy.source = r.str(*s, ws, "source", std::nullopt, true);
    sy.prefill_base_ms = r.num(*s, ws, "prefill_base_ms", sy.prefill_base_ms, 0, 1e6);
    sy.prefill_per_ref_frame_ms = r.num(*s, ws, "prefill_per_ref_frame_ms", sy.prefill_per_ref_frame_ms, 0, 1e6);
    sy.prefill_per_text_token_ms = r.num(*s, ws, "prefill_per_text_token_ms", sy.prefill_per_text_token_ms, 0, 1e6);
    sy.step_base_ms = r.num(*s, ws, "step_base_ms", sy.step_base_ms, 0, 1e6);
    sy.step_per_active_ms = r.num(*s, ws, "step_per_active_ms", sy.step_per_active_ms, 0, 1e6);
    sy.steps_to_first_audio =
        static_cast<int>(r.integer(*s, ws, "steps_to_first_audio", sy.steps_to_first_audio, 0, 1000000));
    sy.steps_per_audio_second = r.num(*s, ws, "steps_per_audio_second", sy.steps_per_audio_second, 0, 1e6, true);
    sy.audio_seconds_per_text_token =
        r.num(*s, ws, "audio_seconds_per_text_token", sy.audio_seconds_per_text_token, 0, 100, true);
    sy.chars_per_text_token = r.num(*s, ws, "chars_per_text_token", sy.chars_per_text_token, 0, 100, true);
    m.models.push_back(std::move(ms));
  }

  {
    const json* rj = r.find(j, "references");
    if (!rj) r.fail("references", "required");
    r.object(*rj, "references",
             {"clips", "variants", "variant_gain_db", "warmup", "popularity", "never_seen_share", "trace"});
    const json& clips = r.array(*rj, "references", "clips", true);
    auto base = std::filesystem::path(path).parent_path();
    for (std::size_t i = 0; i < clips.size(); ++i) {
      std::string w = Reader::idx("references.clips", i);
      if (!clips[i].is_string() || clips[i].get<std::string>().empty()) r.fail(w, "must be a non-empty string");
      std::filesystem::path p = clips[i].get<std::string>();
      if (p.is_relative()) p = base / p;
      if (!std::filesystem::is_regular_file(p)) r.fail(w, "no such file: " + p.string());
      m.references.clips.push_back(p.lexically_normal().string());
    }
    m.references.variants =
        static_cast<int>(r.integer(*rj, "references", "variants", m.references.variants, 0, 1000000));
    m.references.variant_gain_db =
        r.num(*rj, "references", "variant_gain_db", m.references.variant_gain_db, 0, 6, true);
    m.references.warmup = static_cast<int>(r.integer(*rj, "references", "warmup", m.references.warmup, 0, 1000));
    if (const json* pop = r.find(*rj, "popularity")) {
      r.object(*pop, "references.popularity", {"zipf"});
      if (!r.find(*pop, "zipf")) r.fail("references.popularity.zipf", "required");
      m.references.zipf = r.num(*pop, "references.popularity", "zipf", 0, 0, 10);
    }
    m.references.never_seen_share = r.num(*rj, "references", "never_seen_share", 0, 0, 1);
    if (r.find(*rj, "trace")) {
      std::filesystem::path p = r.str(*rj, "references", "trace", std::nullopt, true);
      if (p.is_relative()) p = base / p;
      m.references.trace = p.lexically_normal().string();
      m.references.trace_lines = read_trace(m.references.trace);
      if (m.references.zipf || m.references.never_seen_share > 0)
        r.fail("references.trace", "a trace sets the references itself: not with popularity or never_seen_share");
    }
  }

  const json& texts = r.array(j, "", "texts", true);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string w = Reader::idx("texts", i);
    if (!texts[i].is_string() || texts[i].get<std::string>().empty()) r.fail(w, "must be a non-empty string");
    m.texts.push_back(texts[i].get<std::string>());
  }

  const json* phases = r.find(j, "phases");
  json default_phases = json::array({json{{"kind", "cold"}}});
  if (!phases) phases = &default_phases;
  if (!phases->is_array()) r.fail("phases", "must be an array");
  if (phases->empty()) r.fail("phases", "must not be empty");
  std::set<std::string> kinds;
  for (std::size_t i = 0; i < phases->size(); ++i) {
    std::string w = Reader::idx("phases", i);
    const json& pj = (*phases)[i];
    r.object(pj, w, {"kind", "concurrency", "requests", "distinct"});
    PhaseSpec ps;
    std::string kind = r.str(pj, w, "kind", std::nullopt);
    if (kind == "cold")
      ps.kind = Phase::cold;
    else if (kind == "warm")
      ps.kind = Phase::warm;
    else if (kind == "warm-disk")
      ps.kind = Phase::warm_disk;
    else if (kind == "warm-shared")
      ps.kind = Phase::warm_shared;
    else
      r.fail(Reader::key(w, "kind"), "must be cold, warm, warm-disk or warm-shared (got '" + kind + "')");
    if (!kinds.insert(kind).second) r.fail(Reader::key(w, "kind"), "duplicate phase '" + kind + "'");
    ps.concurrency = default_conc;
    if (const json* c = r.find(pj, "concurrency"))
      ps.concurrency = concurrency_list(r, *c, Reader::key(w, "concurrency"));
    const auto& lines = m.references.trace_lines;
    ps.requests = static_cast<int>(r.integer(
        pj, w, "requests", lines.empty() ? default_requests : static_cast<long long>(lines.size()), 1, 100000));
    if (!lines.empty()) {
      if (static_cast<std::size_t>(ps.requests) > lines.size())
        r.fail(Reader::key(w, "requests"), "must be <= the trace's " + std::to_string(lines.size()) + " lines");
      if (r.find(pj, "distinct")) r.fail(Reader::key(w, "distinct"), "set by the trace: leave it out");
    }
    ps.distinct = lines.empty() ? static_cast<int>(r.integer(pj, w, "distinct", ps.requests, 1, 100000))
                                : trace_distinct(m.references, ps.requests);
    if (ps.distinct > ps.requests)
      r.fail(Reader::key(w, "distinct"), "must be <= requests (" + std::to_string(ps.requests) + ")");
    m.phases.push_back(std::move(ps));
  }

  const json* arms = r.find(j, "arms");
  json default_arms = json::array({json{{"name", "m4a"}}});
  if (!arms) arms = &default_arms;
  if (!arms->is_array()) r.fail("arms", "must be an array");
  if (arms->empty()) r.fail("arms", "must not be empty");
  std::set<std::string> arm_names;
  for (std::size_t i = 0; i < arms->size(); ++i) {
    std::string w = Reader::idx("arms", i);
    const json& aj = (*arms)[i];
    r.object(aj, w,
             {"name", "max_batch_size", "max_batch_wait_ms", "cache_batched", "parity_sample", "batch_workers",
              "group_by_length"});
    ArmSpec a;
    std::string name = r.str(aj, w, "name", std::nullopt);
    if (name != "m4a" && name != "m4b") r.fail(Reader::key(w, "name"), "must be m4a or m4b (got '" + name + "')");
    if (!arm_names.insert(name).second) r.fail(Reader::key(w, "name"), "duplicate arm '" + name + "'");
    a.arm = parse_arm(name);
    if (a.arm == Arm::m4b) {
      a.max_batch_size = static_cast<int>(r.integer(aj, w, "max_batch_size", default_m4b_max_batch_size, 2, 256));
      a.max_batch_wait_ms = r.num(aj, w, "max_batch_wait_ms", default_m4b_max_batch_wait_ms, 0, 10000);
      if (const json* cb = r.find(aj, "cache_batched")) {
        if (!cb->is_boolean()) r.fail(Reader::key(w, "cache_batched"), "must be true or false");
        a.cache_batched = cb->get<bool>();
      }
      a.batch_workers = static_cast<int>(r.integer(aj, w, "batch_workers", 0, 0, 1024));
      if (const json* g = r.find(aj, "group_by_length")) {
        if (g->is_string() && g->get<std::string>() == "exact") {
          a.group_by_length.mode = BatchGrouping::Mode::exact;
        } else if (g->is_number()) {
          a.group_by_length.mode = BatchGrouping::Mode::max_padding_waste;
          a.group_by_length.max_padding_waste = r.num_value(*g, Reader::key(w, "group_by_length"), 0, 1);
        } else {
          r.fail(Reader::key(w, "group_by_length"), "must be \"exact\" or a padded fraction in [0, 1]");
        }
      }
      a.parity_sample = static_cast<int>(r.integer(aj, w, "parity_sample", default_parity_sample, 0, 1000000));
    } else if (r.find(aj, "max_batch_size") || r.find(aj, "max_batch_wait_ms") || r.find(aj, "cache_batched") ||
               r.find(aj, "parity_sample") || r.find(aj, "batch_workers") || r.find(aj, "group_by_length")) {
      r.fail(w, "m4a takes no batch options");
    }
    m.arms.push_back(a);
  }

  if (!m.references.trace_lines.empty() && r.find(j, "arrivals"))
    r.fail("arrivals", "set by references.trace: leave it out");
  if (const json* a = r.find(j, "arrivals")) {
    r.object(*a, "arrivals", {"mode", "rate_per_s"});
    std::string mode = r.str(*a, "arrivals", "mode", "closed");
    if (mode == "open") {
      m.arrivals.open_loop = true;
      if (!r.find(*a, "rate_per_s")) r.fail("arrivals.rate_per_s", "required for open-loop arrivals");
      m.arrivals.rate_per_s = r.num(*a, "arrivals", "rate_per_s", 0, 0, 1e6, true);
    } else if (mode != "closed") {
      r.fail("arrivals.mode", "must be closed or open (got '" + mode + "')");
    } else if (r.find(*a, "rate_per_s")) {
      r.fail("arrivals.rate_per_s", "only for open-loop arrivals");
    }
  }

  if (const json* g = r.find(j, "gate")) {
    r.object(*g, "gate", {"latency_reduction", "throughput_gain", "bootstrap_resamples", "confidence"});
    const GateSpec d;
    m.gate.latency_reduction = r.num(*g, "gate", "latency_reduction", d.latency_reduction, 0, 1, true);
    m.gate.throughput_gain = r.num(*g, "gate", "throughput_gain", d.throughput_gain, 0, 100, true);
    m.gate.bootstrap_resamples =
        static_cast<int>(r.integer(*g, "gate", "bootstrap_resamples", d.bootstrap_resamples, 100, 1000000));
    m.gate.confidence = r.num(*g, "gate", "confidence", d.confidence, 0.5, 0.999);
  }
  if (const json* c = r.find(j, "cache")) {
    r.object(*c, "cache", {"max_items", "max_bytes", "shared"});
    m.cache.max_items = static_cast<std::size_t>(
        r.integer(*c, "cache", "max_items", static_cast<std::int64_t>(m.cache.max_items), 1, 1LL << 40));
    m.cache.max_bytes = static_cast<std::size_t>(
        r.integer(*c, "cache", "max_bytes", static_cast<std::int64_t>(m.cache.max_bytes), 1, 1LL << 50));
    if (r.find(*c, "shared")) {
      m.cache.shared = r.str(*c, "cache", "shared", std::nullopt, true);
      if (std::string why = shared_cache_problem(m.cache.shared); !why.empty()) r.fail("cache.shared", why);
    }
  }
  const bool shared_phase =
      std::any_of(m.phases.begin(), m.phases.end(), [](const PhaseSpec& p) { return p.kind == Phase::warm_shared; });
  if (shared_phase && m.cache.shared.empty())
    r.fail("cache.shared", std::string("required by the warm-shared phase: \"") + local_shared_cache +
                               "\" (a private redis-server on loopback) or a redis:// URL");
  if (!shared_phase && !m.cache.shared.empty())
    r.fail("cache.shared", "only a warm-shared phase uses the shared tier: add one or leave cache.shared out");

  if (const json* c = r.find(j, "capacity")) {
    std::vector<int> cold;  // the cold phase's levels: each rate step sends its references
    for (const PhaseSpec& p : m.phases) cold = p.kind == Phase::cold ? p.concurrency : cold;
    m.capacity = parse_capacity(*c, path, cold, !m.references.trace_lines.empty());
  }
  std::vector<Arm> noise_arms;
  for (const ArmSpec& a : m.arms) noise_arms.push_back(a.arm);
  m.noise = parse_noise_settings(j, path, m.repeats, noise_arms);

  int needed = m.measured_references() +
               (m.references.warmup == warmup_concurrency ? min_warmup_references : m.references.warmup) +
               m.never_seen_references();
  int available = m.available_references();
  if (available < needed)
    r.fail(m.references.variants > 0 ? "references.variants" : "references.clips",
           "must provide at least " + std::to_string(needed) +
               " references (largest phase distinct + warmup + never-seen requests), got " + std::to_string(available));
  return m;
}

Manifest load_manifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::bad_input, path + ": cannot open manifest");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json j;
  try {
    j = json::parse(bytes);
  } catch (const json::parse_error& e) {
    throw Error(ErrorKind::bad_input, path + ": not valid JSON: " + e.what());
  }
  Manifest m = parse_manifest(j, path);
  m.sha256 = sha256_hex(bytes);
  return m;
}

}  // namespace refenc::profile
