#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <random>

#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/text_report.hpp"
#include "profile/stats/percentile.hpp"
#include "profile/verdict/compare.hpp"
#include "profile/verdict/gate.hpp"
#include "util/source_dir.hpp"

using namespace refenc::profile;

namespace {

/// Synthetic cold cell data: n requests with E2E = scale * (1 + spread * u), split into stages by share.
struct ArmShape {
  double scale = 1.0;
  double spread = 0.2;
  double wall = 10.0;
  double encode_share = 0.7;
  double synth_share = 0.2;
};

struct Fixture {
  RunRecord run;

  Fixture() { run.have_requests = true; }
  void model(const std::string& name, bool eligible, const std::string& reason = "test") {
    ModelEntry m;
    m.name = name;
    m.evidence_grade = "fake hook";
    m.eligibility = {eligible, reason};
    run.models.push_back(m);
  }
  void cell(const std::string& model, Arm arm, int conc, const ArmShape& a, int n = 64, std::uint64_t seed = 1) {
    Cell c;
    c.key = {model, arm, Phase::cold, conc, 0};
    c.wall_s = a.wall;
    if (arm == Arm::m4b) {  // batches of 4, each artifact identical to its single encode
      c.cache["batches"] = static_cast<std::uint64_t>(n / 4);
      c.cache["batched_items"] = static_cast<std::uint64_t>(n);
      c.parity = ParitySummary{.batched = static_cast<std::size_t>(n),
                               .checked = static_cast<std::size_t>(n),
                               .identical = static_cast<std::size_t>(n)};
    }
    run.cells.push_back(c);
    std::mt19937_64 g(seed);
    auto& v = run.requests[c.key.id()];
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
  GateReport gate() {
    GateOptions o;
    o.spec.bootstrap_resamples = 1000;
    o.seed = 5;
    return evaluate_gate(run, o);
  }
};

}  // namespace

TEST_CASE("gate: GO when M4b clears a threshold with its interval at every concurrency") {
  Fixture f;
  f.model("m", true);
  for (int c : {8, 16}) {
    f.cell("m", Arm::m4a, c, {.scale = 1.0});
    f.cell("m", Arm::m4b, c, {.scale = 0.6, .wall = 6.0}, 64, 2);
  }
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::go);
  CHECK(g.exit_code == 0);
  const LevelResult& c8 = g.models[0].levels[0];
  CHECK(c8.top_stage == Stage::encode);
  CHECK(c8.p95_e2e_reduction.lo >= 0.15);
  CHECK(c8.shares_m4a.encode == Approx(0.7));
  CHECK(c8.throughput_gain.point == Approx(10.0 / 6.0 - 1.0));
  CHECK_FALSE(format_gate(g).empty());
}

TEST_CASE("gate: a gain with no batch larger than one is not batching: INCONCLUSIVE, saying so") {
  Fixture f;
  f.model("m", true);
  for (int c : {8, 16}) {
    f.cell("m", Arm::m4a, c, {.scale = 1.0});
    f.cell("m", Arm::m4b, c, {.scale = 0.6, .wall = 6.0}, 64, 2);
    f.run.cells.back().cache["batches"] = 64;  // 64 batches of one
  }
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::inconclusive);
  CHECK(g.models[0].levels[0].reason.find("no M4b batch held more than one request") != std::string::npos);
}

TEST_CASE("gate: one mismatched artifact turns GO into NO-GO, naming the cell; unchecked batches cap at INCONCLUSIVE") {
  Fixture f;
  f.model("m", true);
  for (int c : {8, 16}) {
    f.cell("m", Arm::m4a, c, {.scale = 1.0});
    f.cell("m", Arm::m4b, c, {.scale = 0.6, .wall = 6.0}, 64, 2);
  }
  Fixture unchecked = f;
  f.run.cells[3].parity->identical -= 1;
  f.run.cells[3].parity->mismatched = 1;
  f.run.cells[3].parity->mismatched_codes = 1;
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::no_go);
  CHECK(
      g.models[0].reason.rfind("parity fails: 1 of 128 checked batched artifacts differ from a single encode of the "
                               "same request (0 failed checks; 1 integer elements differ; max abs diff 0, tolerance 0) "
                               "in m/m4b/cold/c16/r0",
                               0) == 0);
  unchecked.run.cells[1].parity.reset();
  g = unchecked.gate();
  CHECK(g.models[0].verdict == Verdict::inconclusive);
  CHECK(g.models[0].reason.rfind("parity not checked for batched requests in m/m4b/cold/c8/r0", 0) == 0);
}

TEST_CASE("gate: NO-GO when M4b gains too little, or when encode is not the top stage") {
  Fixture f;
  f.model("m", true);
  f.cell("m", Arm::m4a, 8, {});
  f.cell("m", Arm::m4b, 8, {.scale = 0.97, .wall = 9.8}, 64, 2);
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::no_go);
  CHECK(g.exit_code == gate_exit_no_go);

  Fixture s;
  s.model("m", true);
  s.cell("m", Arm::m4a, 8, {.encode_share = 0.2, .synth_share = 0.7});
  s.cell("m", Arm::m4b, 8, {.scale = 0.5, .wall = 5, .encode_share = 0.2, .synth_share = 0.7}, 64, 2);
  g = s.gate();
  CHECK(g.models[0].verdict == Verdict::no_go);
  CHECK(g.models[0].levels[0].top_stage == Stage::synthesis_end);
  CHECK(to_json(g)["models"][0]["concurrency"][0]["top_stage"] == "synthesis");
  CHECK(g.models[0].reason.find("not the top stage") != std::string::npos);
}

TEST_CASE("gate: INCONCLUSIVE when only the point estimate clears the threshold") {
  Fixture f;
  f.model("m", true);
  // Wide spread and few requests: a 17% point reduction whose interval reaches well below 15%.
  f.cell("m", Arm::m4a, 8, {.scale = 1.0, .spread = 1.5}, 24, 3);
  f.cell("m", Arm::m4b, 8, {.scale = 0.83, .spread = 1.5, .wall = 9.5}, 24, 3);
  GateReport g = f.gate();
  const LevelResult& c = g.models[0].levels[0];
  CHECK(c.p95_e2e_reduction.point == Approx(0.17));
  CHECK(c.p95_e2e_reduction.lo < 0.15);
  CHECK(g.models[0].verdict == Verdict::inconclusive);
  CHECK(g.exit_code == gate_exit_inconclusive);
}

TEST_CASE("gate: NOT_APPLICABLE with the reason, and MISSING_ARM") {
  Fixture f;
  f.model("qwen", false, "no safe batch primitive");
  f.cell("qwen", Arm::m4a, 8, {});
  f.model("fish", true);
  f.cell("fish", Arm::m4a, 8, {});
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::not_applicable);
  CHECK(g.models[0].reason == "no safe batch primitive");
  CHECK(g.models[1].verdict == Verdict::missing_arm);
  CHECK(g.models[1].reason.find("m4b at concurrency 8") != std::string::npos);
  CHECK(g.exit_code == gate_exit_missing_arm);

  Fixture only_na;
  only_na.model("moss", false, "has its own batched encoder");
  CHECK(only_na.gate().exit_code == 0);
}

TEST_CASE(
    "gate: a concurrency level the manifest profiles but the run lacks is MISSING_ARM, not a verdict from the rest") {
  Fixture f;
  f.model("fish", true);
  f.run.manifest.levels[Phase::cold] = {8, 16};
  f.cell("fish", Arm::m4a, 8, {});
  f.cell("fish", Arm::m4b, 8, {.scale = 0.97, .wall = 9.8}, 64, 2);  // NO-GO at c8 alone
  GateReport g = f.gate();
  CHECK(g.models[0].verdict == Verdict::missing_arm);
  CHECK(g.exit_code == gate_exit_missing_arm);
  CHECK(g.models[0].reason.find("m4a at concurrency 16 (fish/m4a/cold/c16)") != std::string::npos);
  CHECK(g.models[0].reason.find("m4b at concurrency 16 (fish/m4b/cold/c16)") != std::string::npos);
  CHECK(format_gate(g).find("MISSING_ARM") != std::string::npos);
}

TEST_CASE("gate: reports/baseline without fish-s2-pro's cold c16 cells is MISSING_ARM (exit 12), naming them") {
  RunRecord run = load_run_with_requests(std::string(refenc::source_dir()) + "/reports/baseline");
  GateReport full = evaluate_gate(run, run.gate_options());
  CHECK(full.exit_code == gate_exit_no_go);
  std::erase_if(run.cells, [](const Cell& c) {
    return c.key.model == "fish-s2-pro" && c.key.phase == Phase::cold && c.key.concurrency == 16;
  });
  GateReport g = evaluate_gate(run, run.gate_options());
  CHECK(g.exit_code == gate_exit_missing_arm);
  REQUIRE(g.models[0].model == "fish-s2-pro");
  CHECK(g.models[0].verdict == Verdict::missing_arm);
  CHECK(g.models[0].reason ==
        "no cold-cache data for m4a at concurrency 16 (fish-s2-pro/m4a/cold/c16), m4b at concurrency 16 "
        "(fish-s2-pro/m4b/cold/c16)");
}

TEST_CASE("the baseline report reads back into the same JSON, and its gate into the same verdicts") {
  std::string dir = std::string(refenc::source_dir()) + "/reports/baseline";
  std::ifstream in(dir + "/report.json");
  nlohmann::json raw = nlohmann::json::parse(in);
  RunRecord run = load_run_with_requests(dir);
  CHECK(to_json(run) == raw);
  REQUIRE(run.gate);
  // The baseline predates parity checks: its batched requests were never compared with single encodes,
  // which the gate now says first; the rest of every verdict is the same.
  nlohmann::json again = to_json(evaluate_gate(run, run.gate_options()));
  for (nlohmann::json& m : again["models"]) {
    if (!m.contains("parity")) continue;
    std::string parity = m["parity"];
    CHECK(parity.rfind("parity not checked for batched requests in fish-s2-pro/m4b/cold/c8/r0", 0) == 0);
    std::string reason = m["reason"];
    REQUIRE(reason.rfind(parity + "; ", 0) == 0);
    m["reason"] = reason.substr(parity.size() + 2);
    m.erase("parity");
    // Verdict stability is new too: the baseline has one repeat, which gives the model's verdict alone.
    REQUIRE(m.contains("stability"));
    CHECK(m["stability"]["repeats"] == 1);
    CHECK(m["stability"]["repeats_agreeing"] == 1);
    m.erase("stability");
    for (nlohmann::json& l : m["concurrency"]) {
      CHECK(l["bootstrap_go_share"].get<double>() >= 0);
      l.erase("bootstrap_go_share");
    }
  }
  CHECK(again == raw["gate"]);
  CHECK(run.manifest.levels.at(Phase::cold) == std::vector<int>{8, 16});
}

TEST_CASE("compare flags a significant slowdown and nothing against itself") {
  Fixture base;
  base.model("m", true);
  base.cell("m", Arm::m4a, 8, {.scale = 1.0});
  Fixture slow;
  slow.model("m", true);
  slow.cell("m", Arm::m4a, 8, {.scale = 1.5, .wall = 15}, 64, 9);
  CompareResult same = compare_runs(base.run, base.run, {});
  CHECK(same.matched == 1);
  CHECK(same.regressions == 0);
  CompareResult worse = compare_runs(base.run, slow.run, {.threshold = 0.10});
  CHECK(worse.regressions == 1);
  nlohmann::json j = to_json(worse);
  CHECK(j["cells"][0]["metrics"]["p95_e2e"]["regression"] == true);
  CHECK(j["cells"][0]["metrics"]["throughput"]["regression"] == true);
  CHECK(format_compare(worse).find("REGRESSION") != std::string::npos);
}
