#include "profile/manifest/capacity_spec.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "profile/manifest/manifest_reader.hpp"

namespace refenc::profile {
using nlohmann::json;

CapacitySpec parse_capacity(const json& j, const std::string& file, const std::vector<int>& cold_concurrency,
                            bool has_trace) {
  const ManifestReader f(file);
  if (cold_concurrency.empty()) f.fail("capacity", "needs a cold phase (each rate step sends its references)");
  if (has_trace) f.fail("capacity", "not with references.trace (a trace sets its own arrivals)");
  f.object(j, "capacity", {"slo", "rates", "arrivals", "concurrency", "search"});
  CapacitySpec c;
  auto slo = j.find("slo");
  if (slo == j.end()) f.fail("capacity.slo", "required (ttfa_ms and e2e_ms)");
  f.object(*slo, "capacity.slo", {"ttfa_ms", "e2e_ms"});
  for (const char* k : {"ttfa_ms", "e2e_ms"})
    if (!slo->contains(k)) f.fail(std::string("capacity.slo.") + k, "required");
  c.slo.ttfa_ms = f.num_value((*slo)["ttfa_ms"], "capacity.slo.ttfa_ms", 0, 1e7, true);
  c.slo.e2e_ms = f.num_value((*slo)["e2e_ms"], "capacity.slo.e2e_ms", 0, 1e7, true);
  if (c.slo.e2e_ms < c.slo.ttfa_ms)
    f.fail("capacity.slo.e2e_ms", "must be >= ttfa_ms (" + ManifestReader::fmt(c.slo.ttfa_ms) + ")");

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
      double r = f.num_value((*rates)[i], w, 0, 1e6, true);
      if (std::find(c.rates.begin(), c.rates.end(), r) != c.rates.end())
        f.fail(w, "duplicate rate " + ManifestReader::fmt(r));
      c.rates.push_back(r);
    }
    std::sort(c.rates.begin(), c.rates.end());
  } else {
    f.fail("capacity.rates", "must be a list of arrival rates (req/s) or \"auto\"");
  }

  if (auto s = j.find("search"); s != j.end()) {
    if (!c.rates.empty()) f.fail("capacity.search", "only with rates \"auto\"");
    f.object(*s, "capacity.search", {"start_rate_per_s", "max_rate_per_s", "precision", "max_steps"});
    if (s->contains("start_rate_per_s"))
      c.search.start_rate_per_s =
          f.num_value((*s)["start_rate_per_s"], "capacity.search.start_rate_per_s", 0, 1e6, true);
    if (s->contains("max_rate_per_s"))
      c.search.max_rate_per_s = f.num_value((*s)["max_rate_per_s"], "capacity.search.max_rate_per_s", 0, 1e6, true);
    if (c.search.max_rate_per_s < c.search.start_rate_per_s)
      f.fail("capacity.search.max_rate_per_s", "must be >= start_rate_per_s");
    if (s->contains("precision"))
      c.search.precision = f.num_value((*s)["precision"], "capacity.search.precision", 0, 0.5, true);
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
