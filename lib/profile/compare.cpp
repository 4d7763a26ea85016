#include "profile/compare.hpp"

#include <map>
#include <numeric>
#include <sstream>

#include <fmt/format.h>

#include "profile/bootstrap.hpp"
#include "profile/cell_metrics.hpp"
#include "profile/percentile.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

struct Pooled {
  std::vector<RequestRecord> records;
  std::size_t ok = 0;
  double wall = 0;
};

std::map<std::string, Pooled> pool(const LoadedRun& run) {
  std::map<std::string, Pooled> out;
  for (const json& c : run.report.at("cells")) {
    std::string key = fmt::format("{}/{}/{}/c{}", c.at("model").get<std::string>(), c.at("arm").get<std::string>(),
                                  c.at("phase").get<std::string>(), c.at("concurrency").get<int>());
    Pooled& p = out[key];
    p.wall += c.at("wall_s").get<double>();
    auto it = run.requests.find(c.at("id").get<std::string>());
    if (it == run.requests.end()) continue;
    for (const auto& r : it->second) {
      p.records.push_back(r);
      if (r.ok()) ++p.ok;
    }
  }
  return out;
}

double mean(std::span<const double> v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

}  // namespace

CompareResult compare_runs(const LoadedRun& baseline, const LoadedRun& current, const CompareOptions& options) {
  CompareResult result;
  auto base = pool(baseline), cur = pool(current);
  json cells = json::array();
  json unmatched = json::array();
  BootstrapOptions bo{options.resamples, options.seed, 0.95};
  for (const auto& [key, c] : cur) {
    auto bit = base.find(key);
    if (bit == base.end()) {
      unmatched.push_back(key);
      continue;
    }
    const Pooled& b = bit->second;
    json metrics = json::object();
    bool regressed = false;
    struct Metric {
      const char* name;
      const char* stage;
      double p;
    };
    for (const Metric& m : {Metric{"p95_e2e", "e2e", 95}, Metric{"p95_encode", "encode", 95},
                            Metric{"p50_preprocessing", "preprocessing", 50}}) {
      auto xb = stage_samples(b.records, m.stage), xc = stage_samples(c.records, m.stage);
      if (xb.empty() || xc.empty()) continue;
      double p = m.p;
      Interval ch = bootstrap_pair(xb, xc, [p](std::span<const double> x, std::span<const double> y) {
        double bx = percentile(x, p);
        return bx > 0 ? percentile(y, p) / bx - 1.0 : 0.0;
      }, bo);
      bool reg = std::string(m.name) != "p50_preprocessing" && ch.point > options.threshold && ch.lo > 0;
      regressed = regressed || reg;
      metrics[m.name] = {{"baseline", percentile(xb, p)}, {"current", percentile(xc, p)},
                         {"change", {{"point", ch.point}, {"lo", ch.lo}, {"hi", ch.hi}}}, {"regression", reg}};
    }
    auto eb = stage_samples(b.records, "e2e"), ec = stage_samples(c.records, "e2e");
    if (!eb.empty() && !ec.empty() && b.wall > 0 && c.wall > 0) {
      double tb = static_cast<double>(b.ok) / b.wall, tc = static_cast<double>(c.ok) / c.wall;
      double mb = mean(eb), mc = mean(ec);
      Interval ch = bootstrap_pair(eb, ec, [&](std::span<const double> x, std::span<const double> y) {
        return (tc * mc / mean(y)) / (tb * mb / mean(x)) - 1.0;
      }, bo);
      ch.point = tc / tb - 1.0;
      bool reg = ch.point < -options.threshold && ch.hi < 0;
      regressed = regressed || reg;
      metrics["throughput"] = {{"baseline", tb}, {"current", tc},
                               {"change", {{"point", ch.point}, {"lo", ch.lo}, {"hi", ch.hi}}}, {"regression", reg}};
    }
    ++result.matched;
    if (regressed) ++result.regressions;
    cells.push_back({{"cell", key}, {"metrics", metrics}, {"regression", regressed}});
  }
  for (const auto& [key, b] : base)
    if (!cur.count(key)) unmatched.push_back(key);
  result.json = {{"threshold", options.threshold}, {"cells", cells}, {"unmatched", unmatched},
                 {"regressions", result.regressions}, {"matched", result.matched},
                 {"baseline", baseline.dir}, {"current", current.dir},
                 {"baseline_evidence", baseline.report.value("models", json::array())},
                 {"method", "relative change current/baseline - 1; 95% percentile bootstrap over requests, repeats pooled"}};
  return result;
}

std::string format_compare(const CompareResult& r, double threshold) {
  std::ostringstream os;
  os << fmt::format("{:<30} {:<18} {:>10} {:>10} {:>26}  {}\n", "cell", "metric", "baseline", "current",
                    "change [95% CI]", "");
  for (const json& c : r.json["cells"]) {
    for (auto it = c["metrics"].begin(); it != c["metrics"].end(); ++it) {
      const json& m = it.value();
      bool tput = it.key() == "throughput";
      double scale = tput ? 1.0 : 1000.0;
      os << fmt::format("{:<30} {:<18} {:>10.2f} {:>10.2f} {:>+8.1f}% [{:+.1f}, {:+.1f}]  {}\n",
                        c["cell"].get<std::string>(), it.key() + (tput ? " (req/s)" : " (ms)"),
                        scale * m["baseline"].get<double>(), scale * m["current"].get<double>(),
                        100 * m["change"]["point"].get<double>(), 100 * m["change"]["lo"].get<double>(),
                        100 * m["change"]["hi"].get<double>(), m["regression"].get<bool>() ? "REGRESSION" : "");
    }
  }
  for (const json& u : r.json["unmatched"]) os << "unmatched cell (in one run only): " << u.get<std::string>() << '\n';
  os << fmt::format("{} cells compared, {} with a regression beyond {:.0f}%\n", r.matched, r.regressions, 100 * threshold);
  return os.str();
}

}  // namespace refenc::profile
