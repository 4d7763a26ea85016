// The capacity block of report.json (rate sweeps and the SLO) and the gate's capacity criterion, in
// both directions. A value that is infinite (a p95 when more than 5% of a step's requests failed, a
// gain when M4a's capacity is 0) is written as null and read back as infinity.
#include <cmath>
#include <limits>

#include "profile/record/json_fields.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double read_number(const JsonFields& in, const json& j, const std::string& w, const char* k) {
  if (const json* v = in.find(j, k); v && v->is_null()) return std::numeric_limits<double>::infinity();
  return in.num(j, w, k);
}

json interval(const Interval& i) { return {{"point", number(i.point)}, {"lo", number(i.lo)}, {"hi", number(i.hi)}}; }

Interval read_interval(const JsonFields& in, const json& j, const std::string& w, const char* k) {
  const std::string wi = JsonFields::key(w, k);
  const json& o = in.obj(j, w, k);
  return {read_number(in, o, wi, "point"), read_number(in, o, wi, "lo"), read_number(in, o, wi, "hi")};
}

json step_json(const RateStep& s) {
  return {{"index", s.index},
          {"rate_per_s", s.rate_per_s},
          {"requests", s.requests},
          {"errors", s.errors},
          {"good", s.good},
          {"goodput", s.goodput},
          {"goodput_rps", s.goodput_rps},
          {"throughput_rps", s.throughput_rps},
          {"span_s", s.span_s},
          {"p95_ttfa_s", interval(s.p95_ttfa_s)},
          {"p95_e2e_s", s.p95_e2e_s},
          {"p50_ttfa_s", s.p50_ttfa_s},
          {"meets_slo", s.meets_slo},
          {"batches", s.batches},
          {"batched_items", s.batched_items},
          {"generator_behind", s.generator_behind}};
}

RateStep read_step(const JsonFields& in, const json& j, const std::string& w) {
  RateStep s;
  s.index = static_cast<int>(in.integer(j, w, "index", 0, true));
  s.rate_per_s = in.num(j, w, "rate_per_s", 0, true);
  s.requests = static_cast<std::size_t>(in.integer(j, w, "requests"));
  s.errors = static_cast<std::size_t>(in.integer(j, w, "errors"));
  s.good = static_cast<std::size_t>(in.integer(j, w, "good"));
  s.goodput = in.num(j, w, "goodput");
  s.goodput_rps = in.num(j, w, "goodput_rps");
  s.throughput_rps = in.num(j, w, "throughput_rps");
  s.span_s = in.num(j, w, "span_s");
  s.p95_ttfa_s = read_interval(in, j, w, "p95_ttfa_s");
  s.p95_e2e_s = in.num(j, w, "p95_e2e_s");
  s.p50_ttfa_s = in.num(j, w, "p50_ttfa_s");
  s.meets_slo = in.flag(j, w, "meets_slo");
  s.batches = static_cast<std::uint64_t>(in.integer(j, w, "batches"));
  s.batched_items = static_cast<std::uint64_t>(in.integer(j, w, "batched_items"));
  s.generator_behind = in.flag(j, w, "generator_behind");
  return s;
}

}  // namespace

json capacity_to_json(const CapacityReport& c) {
  json sweeps = json::array();
  for (const CapacitySweep& s : c.sweeps) {
    json steps = json::array();
    for (const RateStep& st : s.steps) steps.push_back(step_json(st));
    sweeps.push_back({{"id", s.id()},
                      {"model", s.model},
                      {"arm", to_string(s.arm)},
                      {"concurrency", s.concurrency},
                      {"steps", steps},
                      {"capacity_rps", interval(s.capacity_rps)},
                      {"censored", s.censored}});
  }
  return {{"slo", {{"ttfa_ms", c.slo.ttfa_ms}, {"e2e_ms", c.slo.e2e_ms}}},
          {"percentile", "p95 of TTFA, nearest rank over sent requests (failed ones count as infinitely slow)"},
          {"arrivals", c.arrivals},
          {"rates", c.rates},
          {"sweeps", sweeps}};
}

CapacityReport capacity_from_json(const JsonFields& in, const json& j) {
  const std::string w = "capacity";
  if (!j.is_object()) in.fail(w, "expected an object");
  CapacityReport c;
  const json& slo = in.obj(j, w, "slo");
  c.slo.ttfa_ms = in.num(slo, "capacity.slo", "ttfa_ms", 0, true);
  c.slo.e2e_ms = in.num(slo, "capacity.slo", "e2e_ms", 0, true);
  c.arrivals = in.str(j, w, "arrivals", c.arrivals);
  c.rates = in.str(j, w, "rates", c.rates);
  const json& sweeps = in.arr(j, w, "sweeps");
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const std::string ws = JsonFields::idx("capacity.sweeps", i);
    CapacitySweep s;
    s.model = in.str(sweeps[i], ws, "model", "", true);
    s.arm = in.label(sweeps[i], ws, "arm", "", parse_arm);
    s.concurrency = static_cast<int>(in.integer(sweeps[i], ws, "concurrency", 0, true));
    const json& steps = in.arr(sweeps[i], ws, "steps");
    for (std::size_t k = 0; k < steps.size(); ++k)
      s.steps.push_back(read_step(in, steps[k], JsonFields::idx(JsonFields::key(ws, "steps"), k)));
    s.capacity_rps = read_interval(in, sweeps[i], ws, "capacity_rps");
    s.censored = in.flag(sweeps[i], ws, "censored");
    c.sweeps.push_back(std::move(s));
  }
  return c;
}

json capacity_result_json(const CapacityResult& r) {
  return {{"slo_ttfa_ms", r.slo_ttfa_ms},    {"m4a_rps", interval(r.m4a_rps)},
          {"m4b_rps", interval(r.m4b_rps)},  {"gain", interval(r.gain)},
          {"m4a_censored", r.m4a_censored},  {"m4b_censored", r.m4b_censored},
          {"outcome", to_string(r.outcome)}, {"reason", r.reason}};
}

CapacityResult capacity_result_from_json(const JsonFields& in, const json& j, const std::string& w) {
  CapacityResult r;
  r.slo_ttfa_ms = in.num(j, w, "slo_ttfa_ms");
  r.m4a_rps = read_interval(in, j, w, "m4a_rps");
  r.m4b_rps = read_interval(in, j, w, "m4b_rps");
  r.gain = read_interval(in, j, w, "gain");
  r.m4a_censored = in.flag(j, w, "m4a_censored");
  r.m4b_censored = in.flag(j, w, "m4b_censored");
  r.outcome = in.label(j, w, "outcome", "", parse_verdict);
  r.reason = in.str(j, w, "reason");
  return r;
}

}  // namespace refenc::profile
