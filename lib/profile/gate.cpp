#include "profile/gate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "profile/bootstrap.hpp"
#include "profile/percentile.hpp"

namespace refenc::profile {
namespace {

using nlohmann::json;

double mean(std::span<const double> v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

std::uint64_t fnv(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

/// Pooled cold-phase data of one model/arm/concurrency.
struct Pool {
  std::vector<double> e2e, pre, enc, synth, queue;
  std::size_t ok = 0;
  double wall = 0;
  int cells = 0;
  double throughput() const { return wall > 0 ? static_cast<double>(ok) / wall : 0.0; }
};

json interval_json(const Interval& i) { return json{{"point", i.point}, {"lo", i.lo}, {"hi", i.hi}}; }

int rank(const std::string& verdict) {
  if (verdict == "MISSING_ARM") return 4;
  if (verdict == "INCONCLUSIVE") return 3;
  if (verdict == "NO-GO") return 2;
  return 0;
}

}  // namespace

GateOptions gate_options_from_report(const json& report) {
  GateOptions o;
  if (report.contains("manifest") && report["manifest"].contains("gate")) {
    const json& g = report["manifest"]["gate"];
    o.latency_reduction = g.value("latency_reduction", o.latency_reduction);
    o.throughput_gain = g.value("throughput_gain", o.throughput_gain);
    o.resamples = g.value("bootstrap_resamples", o.resamples);
    o.confidence = g.value("confidence", o.confidence);
  }
  if (report.contains("context")) o.seed = report["context"].value("seed", o.seed);
  return o;
}

GateResult evaluate_gate(const json& report, const std::map<std::string, std::vector<RequestRecord>>& requests,
                         const GateOptions& options) {
  if (!report.contains("models") || !report["models"].is_array())
    throw Error(ErrorKind::bad_input, "report: models: missing");
  if (!report.contains("cells") || !report["cells"].is_array())
    throw Error(ErrorKind::bad_input, "report: cells: missing");
  GateResult result;
  json models = json::array();
  int worst = 0;
  for (const json& m : report["models"]) {
    std::string name = m.at("name").get<std::string>();
    json out{{"model", name}, {"evidence_grade", m.value("evidence_grade", "unknown")}};
    const json& elig = m.at("eligibility");
    if (!elig.value("eligible", false)) {
      out["verdict"] = "NOT_APPLICABLE";
      out["reason"] = elig.value("reason", "not eligible for different-key batching");
      models.push_back(out);
      continue;
    }
    // Pool the cold cells per arm and concurrency.
    std::map<std::pair<std::string, int>, Pool> pools;
    std::set<int> levels;
    for (const json& c : report["cells"]) {
      if (c.at("model") != name || c.at("phase") != "cold") continue;
      std::string arm = c.at("arm");
      int conc = c.at("concurrency");
      levels.insert(conc);
      Pool& p = pools[{arm, conc}];
      ++p.cells;
      p.wall += c.at("wall_s").get<double>();
      auto it = requests.find(c.at("id").get<std::string>());
      if (it == requests.end()) continue;
      for (const auto& r : it->second) {
        if (!r.ok()) continue;
        ++p.ok;
        p.e2e.push_back(r.e2e_s);
        p.pre.push_back(r.preprocessing_s);
        p.enc.push_back(r.encode_s);
        p.synth.push_back(r.synthesis_end_s);
        p.queue.push_back(r.queue_s);
      }
    }
    std::vector<std::string> missing;
    for (int c : levels)
      for (const char* arm : {"m4a", "m4b"})
        if (!pools.count({arm, c}) || pools[{arm, c}].e2e.empty())
          missing.push_back(fmt::format("{} at concurrency {}", arm, c));
    if (levels.empty()) missing.push_back("cold-phase cells (m4a and m4b)");
    if (!missing.empty()) {
      std::string why = "no cold-cache data for ";
      for (std::size_t i = 0; i < missing.size(); ++i) why += (i ? ", " : "") + missing[i];
      out["verdict"] = "MISSING_ARM";
      out["reason"] = why;
      worst = std::max(worst, rank("MISSING_ARM"));
      models.push_back(out);
      continue;
    }
    json per = json::array();
    std::string verdict = "GO";
    std::vector<std::string> reasons;
    for (int c : levels) {
      const Pool& a = pools[{"m4a", c}];
      const Pool& b = pools[{"m4b", c}];
      double e2e = mean(a.e2e);
      json shares{{"preprocessing", e2e > 0 ? mean(a.pre) / e2e : 0.0},
                  {"encode", e2e > 0 ? mean(a.enc) / e2e : 0.0},
                  {"synthesis", e2e > 0 ? mean(a.synth) / e2e : 0.0},
                  {"queue", e2e > 0 ? mean(a.queue) / e2e : 0.0}};
      std::string top = "encode";
      for (const char* s : {"preprocessing", "synthesis"})
        if (shares[s].get<double>() > shares[top].get<double>()) top = s;
      BootstrapOptions bo{options.resamples, options.seed ^ fnv(name) ^ (static_cast<std::uint64_t>(c) * 0x9E3779B97F4A7C15ULL),
                          options.confidence};
      Interval lat = bootstrap_pair(a.e2e, b.e2e, [](std::span<const double> x, std::span<const double> y) {
        return 1.0 - percentile(y, 95) / percentile(x, 95);
      }, bo);
      double ta = a.throughput(), tb = b.throughput(), ma = mean(a.e2e), mb = mean(b.e2e);
      Interval tput = bootstrap_pair(a.e2e, b.e2e, [&](std::span<const double> x, std::span<const double> y) {
        double rx = ta * ma / mean(x), ry = tb * mb / mean(y);
        return ry / rx - 1.0;
      }, bo);
      tput.point = ta > 0 ? tb / ta - 1.0 : 0.0;
      std::string cv;
      std::string why;
      if (top != "encode") {
        cv = "NO-GO";
        why = fmt::format("c{}: reference encode is not the top stage of cold M4a E2E ({} is: {:.0f}% vs encode {:.0f}%)",
                          c, top, 100 * shares[top].get<double>(), 100 * shares["encode"].get<double>());
      } else if (lat.lo >= options.latency_reduction || tput.lo >= options.throughput_gain) {
        cv = "GO";
        why = fmt::format("c{}: M4b p95 E2E reduction {:.1f}% [{:.1f}, {:.1f}], throughput gain {:.1f}% [{:.1f}, {:.1f}]: "
                          "an interval's lower bound clears its threshold", c, 100 * lat.point, 100 * lat.lo,
                          100 * lat.hi, 100 * tput.point, 100 * tput.lo, 100 * tput.hi);
      } else if (lat.point >= options.latency_reduction || tput.point >= options.throughput_gain) {
        cv = "INCONCLUSIVE";
        why = fmt::format("c{}: point estimate clears a threshold but no lower bound does (p95 reduction {:.1f}% [{:.1f}, {:.1f}], "
                          "throughput gain {:.1f}% [{:.1f}, {:.1f}])", c, 100 * lat.point, 100 * lat.lo, 100 * lat.hi,
                          100 * tput.point, 100 * tput.lo, 100 * tput.hi);
      } else {
        cv = "NO-GO";
        why = fmt::format("c{}: M4b gives {:.1f}% lower p95 E2E (needs {:.0f}%) and {:.1f}% more throughput (needs {:.0f}%)",
                          c, 100 * lat.point, 100 * options.latency_reduction, 100 * tput.point,
                          100 * options.throughput_gain);
      }
      per.push_back(json{{"concurrency", c}, {"stage_shares_m4a", shares}, {"top_stage", top},
                         {"encode_is_top", top == "encode"}, {"p95_e2e_reduction", interval_json(lat)},
                         {"throughput_gain", interval_json(tput)},
                         {"m4a", {{"requests", a.ok}, {"p95_e2e_s", percentile(a.e2e, 95)}, {"throughput_rps", ta}}},
                         {"m4b", {{"requests", b.ok}, {"p95_e2e_s", percentile(b.e2e, 95)}, {"throughput_rps", tb}}},
                         {"outcome", cv}, {"reason", why}});
      reasons.push_back(why);
      if (cv == "NO-GO" || (cv == "INCONCLUSIVE" && verdict == "GO")) verdict = cv == "NO-GO" ? "NO-GO" : "INCONCLUSIVE";
    }
    out["verdict"] = verdict;
    std::string reason;
    for (std::size_t i = 0; i < reasons.size(); ++i) reason += (i ? "; " : "") + reasons[i];
    out["reason"] = reason;
    out["concurrency"] = per;
    worst = std::max(worst, rank(verdict));
    models.push_back(out);
  }
  result.json = json{{"options", {{"latency_reduction", options.latency_reduction},
                                  {"throughput_gain", options.throughput_gain},
                                  {"bootstrap_resamples", options.resamples},
                                  {"confidence", options.confidence},
                                  {"seed", options.seed},
                                  {"method", "percentile bootstrap over requests of the cold cells, pooled over repeats; "
                                             "nearest-rank percentiles"}}},
                     {"models", models}};
  result.exit_code = worst == 4 ? gate_exit_missing_arm : worst == 3 ? gate_exit_inconclusive
                     : worst == 2 ? gate_exit_no_go : 0;
  result.json["exit_code"] = result.exit_code;
  return result;
}

std::string format_gate(const json& gate) {
  std::ostringstream os;
  os << "M4b gate (latency >= " << gate["options"].value("latency_reduction", 0.15) * 100
     << "% lower p95 E2E or throughput >= " << gate["options"].value("throughput_gain", 0.2) * 100
     << "% higher, " << gate["options"].value("confidence", 0.95) * 100 << "% bootstrap CI):\n";
  for (const json& m : gate["models"]) {
    os << fmt::format("  {:<16} {:<15} [{}]\n", m.value("model", ""), m.value("verdict", ""),
                      m.value("evidence_grade", ""));
    if (m.contains("concurrency")) {
      for (const json& c : m["concurrency"]) {
        const json& s = c["stage_shares_m4a"];
        os << fmt::format("      c{:<3} {:<12} shares pre {:.0f}% enc {:.0f}% synth {:.0f}% | p95 red {:+.1f}% [{:+.1f}, {:+.1f}]"
                          " | tput {:+.1f}% [{:+.1f}, {:+.1f}]\n",
                          c.value("concurrency", 0), c.value("outcome", ""), 100 * s.value("preprocessing", 0.0),
                          100 * s.value("encode", 0.0), 100 * s.value("synthesis", 0.0),
                          100 * c["p95_e2e_reduction"].value("point", 0.0), 100 * c["p95_e2e_reduction"].value("lo", 0.0),
                          100 * c["p95_e2e_reduction"].value("hi", 0.0), 100 * c["throughput_gain"].value("point", 0.0),
                          100 * c["throughput_gain"].value("lo", 0.0), 100 * c["throughput_gain"].value("hi", 0.0));
      }
    } else {
      os << "      " << m.value("reason", "") << '\n';
    }
  }
  os << "  exit code " << gate.value("exit_code", 0) << '\n';
  return os.str();
}

}  // namespace refenc::profile
