#include <catch2/catch.hpp>

#include <random>

#include "profile/compare.hpp"
#include "profile/gate.hpp"
#include "profile/percentile.hpp"

using namespace refenc::profile;
using nlohmann::json;

namespace {

/// Synthetic cold cell data: n requests with E2E = scale * (1 + spread * u), split into stages by share.
struct Arm {
  double scale = 1.0;
  double spread = 0.2;
  double wall = 10.0;
  double encode_share = 0.7;
  double synth_share = 0.2;
};

struct Fixture {
  json report = json{{"models", json::array()}, {"cells", json::array()}};
  std::map<std::string, std::vector<RequestRecord>> requests;

  void model(const std::string& name, bool eligible, const std::string& reason = "test") {
    report["models"].push_back({{"name", name}, {"evidence_grade", "fake hook"},
                                {"eligibility", {{"eligible", eligible}, {"reason", reason}}}});
  }
  void cell(const std::string& model, const std::string& arm, int conc, const Arm& a, int n = 64, std::uint64_t seed = 1) {
    std::string id = model + "/" + arm + "/cold/c" + std::to_string(conc) + "/r0";
    report["cells"].push_back({{"id", id}, {"model", model}, {"arm", arm}, {"phase", "cold"}, {"concurrency", conc},
                               {"wall_s", a.wall}});
    std::mt19937_64 g(seed);
    auto& v = requests[id];
    for (int i = 0; i < n; ++i) {
      RequestRecord r;
      r.index = static_cast<std::size_t>(i);
      r.outcome = "encoded";
      double u = static_cast<double>(g() % 10000) / 10000.0;
      r.e2e_s = a.scale * (1.0 + a.spread * u);
      r.encode_s = a.encode_share * r.e2e_s;
      r.synthesis_end_s = a.synth_share * r.e2e_s;
      r.preprocessing_s = r.e2e_s - r.encode_s - r.synthesis_end_s;
      v.push_back(r);
    }
  }
  GateResult gate() {
    GateOptions o;
    o.resamples = 1000;
    o.seed = 5;
    return evaluate_gate(report, requests, o);
  }
};

}  // namespace

TEST_CASE("gate: GO when M4b clears a threshold with its interval at every concurrency") {
  Fixture f;
  f.model("m", true);
  for (int c : {8, 16}) {
    f.cell("m", "m4a", c, {.scale = 1.0});
    f.cell("m", "m4b", c, {.scale = 0.6, .wall = 6.0}, 64, 2);
  }
  GateResult g = f.gate();
  CHECK(g.json["models"][0]["verdict"] == "GO");
  CHECK(g.exit_code == 0);
  const json& c8 = g.json["models"][0]["concurrency"][0];
  CHECK(c8["encode_is_top"] == true);
  CHECK(c8["p95_e2e_reduction"]["lo"].get<double>() >= 0.15);
  CHECK(c8["stage_shares_m4a"]["encode"].get<double>() == Approx(0.7));
  CHECK(c8["throughput_gain"]["point"].get<double>() == Approx(10.0 / 6.0 - 1.0));
  CHECK_FALSE(format_gate(g.json).empty());
}

TEST_CASE("gate: NO-GO when M4b gains too little, or when encode is not the top stage") {
  Fixture f;
  f.model("m", true);
  f.cell("m", "m4a", 8, {});
  f.cell("m", "m4b", 8, {.scale = 0.97, .wall = 9.8}, 64, 2);
  GateResult g = f.gate();
  CHECK(g.json["models"][0]["verdict"] == "NO-GO");
  CHECK(g.exit_code == gate_exit_no_go);

  Fixture s;
  s.model("m", true);
  s.cell("m", "m4a", 8, {.encode_share = 0.2, .synth_share = 0.7});
  s.cell("m", "m4b", 8, {.scale = 0.5, .wall = 5, .encode_share = 0.2, .synth_share = 0.7}, 64, 2);
  g = s.gate();
  CHECK(g.json["models"][0]["verdict"] == "NO-GO");
  CHECK(g.json["models"][0]["concurrency"][0]["top_stage"] == "synthesis");
  CHECK(g.json["models"][0]["reason"].get<std::string>().find("not the top stage") != std::string::npos);
}

TEST_CASE("gate: INCONCLUSIVE when only the point estimate clears the threshold") {
  Fixture f;
  f.model("m", true);
  // Wide spread and few requests: a 17% point reduction whose interval reaches well below 15%.
  f.cell("m", "m4a", 8, {.scale = 1.0, .spread = 1.5}, 24, 3);
  f.cell("m", "m4b", 8, {.scale = 0.83, .spread = 1.5, .wall = 9.5}, 24, 3);
  GateResult g = f.gate();
  const json& c = g.json["models"][0]["concurrency"][0];
  CHECK(c["p95_e2e_reduction"]["point"].get<double>() == Approx(0.17));
  CHECK(c["p95_e2e_reduction"]["lo"].get<double>() < 0.15);
  CHECK(g.json["models"][0]["verdict"] == "INCONCLUSIVE");
  CHECK(g.exit_code == gate_exit_inconclusive);
}

TEST_CASE("gate: NOT_APPLICABLE with the reason, and MISSING_ARM") {
  Fixture f;
  f.model("qwen", false, "no safe batch primitive");
  f.cell("qwen", "m4a", 8, {});
  f.model("fish", true);
  f.cell("fish", "m4a", 8, {});
  GateResult g = f.gate();
  CHECK(g.json["models"][0]["verdict"] == "NOT_APPLICABLE");
  CHECK(g.json["models"][0]["reason"] == "no safe batch primitive");
  CHECK(g.json["models"][1]["verdict"] == "MISSING_ARM");
  CHECK(g.json["models"][1]["reason"].get<std::string>().find("m4b at concurrency 8") != std::string::npos);
  CHECK(g.exit_code == gate_exit_missing_arm);

  Fixture only_na;
  only_na.model("moss", false, "has its own batched encoder");
  CHECK(only_na.gate().exit_code == 0);
}

TEST_CASE("compare flags a significant slowdown and nothing against itself") {
  Fixture base;
  base.model("m", true);
  base.cell("m", "m4a", 8, {.scale = 1.0});
  Fixture slow;
  slow.model("m", true);
  slow.cell("m", "m4a", 8, {.scale = 1.5, .wall = 15}, 64, 9);
  LoadedRun b{"base", base.report, base.requests}, s{"slow", slow.report, slow.requests};
  CompareResult same = compare_runs(b, b, {});
  CHECK(same.matched == 1);
  CHECK(same.regressions == 0);
  CompareResult worse = compare_runs(b, s, {.threshold = 0.10});
  CHECK(worse.regressions == 1);
  CHECK(worse.json["cells"][0]["metrics"]["p95_e2e"]["regression"] == true);
  CHECK(worse.json["cells"][0]["metrics"]["throughput"]["regression"] == true);
  CHECK(format_compare(worse, 0.10).find("REGRESSION") != std::string::npos);
}
