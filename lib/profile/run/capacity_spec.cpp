#include "profile/run/capacity_spec.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/error.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

struct Fields {
  std::string file;

  [[noreturn]] void fail(const std::string& where, const std::string& why) const {
    throw Error(ErrorKind::bad_input, file + ": " + where + ": " + why);
  }

  static std::string text(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
  }

  void only(const json& j, const std::string& where, std::initializer_list<const char*> allowed) const {
    if (!j.is_object()) fail(where, "must be an object");
    std::set<std::string> ok(allowed.begin(), allowed.end());
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!ok.count(it.key())) fail(where + "." + it.key(), "unknown field");
  }

  /// A number > 0 and <= hi.
  double positive(const json& j, const std::string& where, double hi) const {
    if (!j.is_number()) fail(where, "must be a number");
    double d = j.get<double>();
    if (!(d > 0)) fail(where, "must be > 0");
    if (d > hi) fail(where, "must be <= " + text(hi));
    return d;
  }
};

}  // namespace

CapacitySpec parse_capacity(const json& j, const std::string& file, const std::vector<int>& cold_concurrency,
                            bool has_trace) {
  const Fields f{file};
  if (cold_concurrency.empty()) f.fail("capacity", "needs a cold phase (each rate step sends its references)");
  if (has_trace) f.fail("capacity", "not with references.trace (a trace sets its own arrivals)");
  f.only(j, "capacity", {"slo", "rates", "arrivals", "concurrency", "search"});
  CapacitySpec c;
  auto slo = j.find("slo");
  if (slo == j.end()) f.fail("capacity.slo", "required (ttfa_ms and e2e_ms)");
  f.only(*slo, "capacity.slo", {"ttfa_ms", "e2e_ms"});
  for (const char* k : {"ttfa_ms", "e2e_ms"})
    if (!slo->contains(k)) f.fail(std::string("capacity.slo.") + k, "required");
  c.slo.ttfa_ms = f.positive((*slo)["ttfa_ms"], "capacity.slo.ttfa_ms", 1e7);
  c.slo.e2e_ms = f.positive((*slo)["e2e_ms"], "capacity.slo.e2e_ms", 1e7);
  if (c.slo.e2e_ms < c.slo.ttfa_ms)
    f.fail("capacity.slo.e2e_ms", "must be >= ttfa_ms (" + Fields::text(c.slo.ttfa_ms) + ")");

  auto rates = j.find("rates");
  if (rates == j.end()) f.fail("capacity.rates", "required: a list of arrival rates (req/s) or \"auto\"");
  if (rates->is_string()) {
    if (rates->get<std::string>() != "auto")
      f.fail("capacity.rates",
             "must be a list of arrival rates (req/s) or \"auto\" (got '" + rates->get<std::string>() + "')");
  } else if (rates->is_array()) {
    if (rates->empty()) f.fail("capacity.rates", "must not be empty");
    for (std::size_t i = 0; i < rates->size(); ++i) {
      const std::string w = "capacity.rates[" + std::to_string(i) + "]";
      double r = f.positive((*rates)[i], w, 1e6);
      if (std::find(c.rates.begin(), c.rates.end(), r) != c.rates.end()) f.fail(w, "duplicate rate " + Fields::text(r));
      c.rates.push_back(r);
    }
    std::sort(c.rates.begin(), c.rates.end());
  } else {
    f.fail("capacity.rates", "must be a list of arrival rates (req/s) or \"auto\"");
  }

  if (auto s = j.find("search"); s != j.end()) {
    if (!c.rates.empty()) f.fail("capacity.search", "only with rates \"auto\"");
    f.only(*s, "capacity.search", {"start_rate_per_s", "max_rate_per_s", "precision", "max_steps"});
    if (s->contains("start_rate_per_s"))
      c.search.start_rate_per_s = f.positive((*s)["start_rate_per_s"], "capacity.search.start_rate_per_s", 1e6);
    if (s->contains("max_rate_per_s"))
      c.search.max_rate_per_s = f.positive((*s)["max_rate_per_s"], "capacity.search.max_rate_per_s", 1e6);
    if (c.search.max_rate_per_s < c.search.start_rate_per_s)
      f.fail("capacity.search.max_rate_per_s", "must be >= start_rate_per_s");
    if (s->contains("precision")) c.search.precision = f.positive((*s)["precision"], "capacity.search.precision", 0.5);
    if (s->contains("max_steps")) {
      const json& m = (*s)["max_steps"];
      if (!m.is_number_integer() || m.get<long long>() < 2 || m.get<long long>() > 100)
        f.fail("capacity.search.max_steps", "must be an integer in [2, 100]");
      c.search.max_steps = m.get<int>();
    }
  }

  if (auto a = j.find("arrivals"); a != j.end()) {
    if (!a->is_string() || (a->get<std::string>() != "poisson" && a->get<std::string>() != "uniform"))
      f.fail("capacity.arrivals", "must be \"poisson\" or \"uniform\"");
    c.uniform = a->get<std::string>() == "uniform";
  }
  c.concurrency = *std::max_element(cold_concurrency.begin(), cold_concurrency.end());
  if (auto cc = j.find("concurrency"); cc != j.end()) {
    if (!cc->is_number_integer() || cc->get<long long>() < 1 || cc->get<long long>() > 4096)
      f.fail("capacity.concurrency", "must be an integer in [1, 4096]");
    c.concurrency = cc->get<int>();
  }
  return c;
}

}  // namespace refenc::profile
