#include <catch2/catch.hpp>

#include <filesystem>

#include "core/error.hpp"
#include "profile/record/cell_groups.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "profile/stats/throughput.hpp"
#include "profile/verdict/compare.hpp"
#include "profile/verdict/gate.hpp"
#include "test_support.hpp"

using namespace refenc::profile;
using namespace refenc::profile::test;
using nlohmann::json;

namespace {

RunRecord fixture_run(bool with_requests = true) {
  RunRecord run = load_run(fixture_run_dir());
  if (!with_requests) {
    run.requests.clear();
    run.have_requests = false;
  }
  return run;
}

std::string render_fixture(bool with_requests = true) { return render_html_report(fixture_run(with_requests)); }

/// Text of the page with tags removed and the common entities decoded.
std::string visible_text(const std::string& html) {
  std::string t;
  t.reserve(html.size());
  bool in_tag = false;
  for (char c : html) {
    if (c == '<') in_tag = true;
    if (!in_tag)
      t += c;
    else if (c == '>')
      in_tag = false, t += ' ';
  }
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
    for (std::size_t at; (at = t.find(from)) != std::string::npos;) t.replace(at, std::string(from).size(), to);
  return t;
}

}  // namespace

TEST_CASE("the report page shows every model's verdict, reason and evidence grade", "[html]") {
  json report = fixture_report();
  std::string html = render_fixture();
  for (const json& m : report["gate"]["models"]) {
    std::string model = m["model"], verdict = m["verdict"];
    CHECK(html.find("data-model=\"" + model + "\" data-verdict=\"" + verdict + "\"") != std::string::npos);
    CHECK(keyed_text(html, "grade." + model) == m["evidence_grade"].get<std::string>());
    if (!m.contains("concurrency")) CHECK(visible_text(html).find(m["reason"].get<std::string>()) != std::string::npos);
    for (const json& c : m.value("concurrency", json::array())) {
      std::string key = model + ".c" + std::to_string(c["concurrency"].get<int>());
      CHECK(keyed_text(html, "reduction." + key) == interval_text(c["p95_e2e_reduction"]));
      CHECK(keyed_text(html, "gain." + key) == interval_text(c["throughput_gain"]));
      CHECK(visible_text(html).find(c["reason"].get<std::string>()) != std::string::npos);
    }
  }
  CHECK(keyed_text(html, "threshold.latency") == "15.0%");
  CHECK(keyed_text(html, "threshold.throughput") == "20.0%");
  CHECK(keyed_text(html, "gate.exit_code") == "10");
  CHECK(keyed_text(html, "status") == "complete");
}

TEST_CASE("the report page carries each cell's throughput and latency percentiles", "[html]") {
  json report = fixture_report();
  std::string html = render_fixture();
  for (const json& c : report["cells"]) {
    std::string id = c["id"];
    CHECK(keyed_text(html, "tput." + id) == fmt::format("{:.2f}", c["throughput_rps"].get<double>()));
    const json& e2e = c["stages"]["e2e"];
    CHECK(keyed_text(html, "e2e." + id) ==
          fmt::format("{:.1f} / {:.1f}", 1000 * e2e["p50"].get<double>(), 1000 * e2e["p95"].get<double>()));
  }
  // Cache counters summed per model, arm and phase: mimi-proxy's cold M4a ran three cells of 30 misses.
  CHECK(keyed_text(html, "cache.mimi-proxy/m4a/cold.misses") == "90");
  CHECK(keyed_text(html, "cache.mimi-proxy/m4b/warm.hits") == "30");
}

TEST_CASE("every string from the report is escaped", "[html]") {
  std::string html = render_fixture();
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("bench-&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;b&gt;injected&lt;/b&gt; &amp; &quot;quoted&quot;") != std::string::npos);
  CHECK(html.find("<b>injected</b>") == std::string::npos);

  RunRecord run = fixture_run();
  run.gate->models[0].model = "m\"><img src=x onerror=alert(1)>";
  run.gate->models[0].reason = "</td></tr></table><script>alert(3)</script>";
  run.manifest.name = "</title><script>alert(4)</script>";
  std::string bad = render_html_report(run);
  CHECK(bad.find("<script") == std::string::npos);
  CHECK(bad.find("<img") == std::string::npos);
  CHECK(bad.find("data-model=\"m&quot;&gt;&lt;img") != std::string::npos);
}

TEST_CASE("the page is self-contained: no network reference, no script", "[html]") {
  for (bool with_requests : {true, false}) {
    std::string html = render_fixture(with_requests);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(html.find("url(http") == std::string::npos);
    CHECK(html.find("default-src 'none'") != std::string::npos);
    CHECK(html.find("@media print") != std::string::npos);
  }
}

TEST_CASE("every chart has axis titles with units and a caption", "[html]") {
  std::string html = render_fixture();
  std::size_t figures = 0, at = 0;
  while ((at = html.find("<figure", at)) != std::string::npos) {
    auto end = html.find("</figure>", at);
    REQUIRE(end != std::string::npos);
    std::string fig = html.substr(at, end - at);
    CHECK(fig.find("<svg") != std::string::npos);
    CHECK(fig.find("<figcaption>") != std::string::npos);
    CHECK((fig.find("(ms)") != std::string::npos || fig.find("(%)") != std::string::npos ||
           fig.find("(req/s)") != std::string::npos || fig.find("(s)") != std::string::npos));
    CHECK((fig.find("easured") != std::string::npos));
    ++figures;
    at = end;
  }
  // Two gate charts, four CDF panels, two breakdowns, two throughput charts, one CPU chart.
  CHECK(figures == 11);
  CHECK(html.find("Empirical CDF of 60 successful requests") != std::string::npos);  // c1: two arms of 30
  CHECK(html.find("synthesis (modelled)") != std::string::npos);
  CHECK(html.find("No GPU samples: libnvidia-ml.so.1: cannot open shared object file") != std::string::npos);
}

TEST_CASE("without requests.jsonl the CDFs come from the percentiles and the captions say so", "[html]") {
  std::string html = render_fixture(false);
  CHECK(html.find("requests.jsonl was not found beside report.json") != std::string::npos);
  CHECK(html.find("Drawn from the report's percentiles") != std::string::npos);
  CHECK(html.find("Empirical CDF") == std::string::npos);
  CHECK(html.find("whiskers span the repeats") != std::string::npos);
}

TEST_CASE("the page is deterministic for the same report", "[html]") { CHECK(render_fixture() == render_fixture()); }

TEST_CASE("a report missing most fields still renders; a mistyped one is refused naming the field", "[html]") {
  json minimal{{"schema", "refenc-profile-report"}, {"cells", json::array()}, {"models", json::array()}};
  std::string html = render_html_report(run_from_json(minimal, "minimal.json"));
  CHECK(html.find("The report holds no gate verdict") != std::string::npos);
  json weird{{"schema", "refenc-profile-report"}, {"gate", {{"models", {{{"model", 3}, {"verdict", json::array()}}}}}}};
  CHECK_THROWS_WITH(run_from_json(weird, "weird.json"),
                    Catch::Contains("weird.json: gate.models[0].model: expected a string"));
  json bad_arm{{"schema", "refenc-profile-report"},
               {"cells", {{{"model", "m"}, {"arm", "m5"}, {"phase", "cold"}, {"concurrency", 1}, {"wall_s", 1.0}}}}};
  CHECK_THROWS_WITH(run_from_json(bad_arm, "x.json"), Catch::Contains("x.json: cells[0].arm: unknown arm 'm5'"));
  CHECK_THROWS_AS(run_from_json(json::array(), "array.json"), refenc::Error);
}

TEST_CASE("write_html_report writes report.html beside report.json", "[html]") {
  namespace fs = std::filesystem;
  ScratchDir dir;
  fs::copy(fixture_run_dir(), dir.path, fs::copy_options::recursive);
  std::string out = write_html_report(dir.str());
  CHECK(out == (dir.path / "report.html").string());
  std::string html = read_text(out);
  CHECK(html.find("data-verdict=\"GO\"") != std::string::npos);
  CHECK(html.find("Empirical CDF") != std::string::npos);
  for (const auto& entry : fs::directory_iterator(dir.path))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);

  // An explicit output path; a report.json path instead of the folder; no requests.jsonl.
  fs::remove(dir.path / "requests.jsonl");
  std::string other = write_html_report((dir.path / "report.json").string(), (dir.path / "other.html").string());
  CHECK(read_text(other).find("Drawn from the report's percentiles") != std::string::npos);
}

TEST_CASE("write_html_report names the input and the reason when it cannot", "[html]") {
  ScratchDir dir;
  CHECK_THROWS_WITH(write_html_report(dir.str() + "/absent"), Catch::Contains("no such run folder"));
  CHECK_THROWS_WITH(write_html_report(dir.str()), Catch::Contains("report.json") && Catch::Contains("cannot open"));
  std::ofstream(dir.path / "report.json") << "{not json";
  CHECK_THROWS_WITH(write_html_report(dir.str()), Catch::Contains("not valid JSON"));
  std::ofstream(dir.path / "report.json", std::ios::trunc) << "{\"schema\": \"other\"}";
  CHECK_THROWS_WITH(write_html_report(dir.str()), Catch::Contains("not a refenc profile report"));
  std::ofstream(dir.path / "report.json", std::ios::trunc) << "{\"schema\": \"refenc-profile-report\"}";
  std::ofstream(dir.path / "requests.jsonl") << "{\"cell\": \"a\", \"outcome\": \"encoded\"}\nnot json\n";
  CHECK_THROWS_WITH(write_html_report(dir.str()), Catch::Contains("requests.jsonl: line 2"));
}

TEST_CASE("the comparison page highlights regressions", "[html][compare]") {
  RunRecord base = fixture_run(), cur = fixture_run();
  CompareResult comparison;
  comparison.threshold = 0.10;
  comparison.matched = 2;
  comparison.regressions = 1;
  comparison.baseline_dir = "runs/base<1>";
  comparison.current_dir = "runs/cur";
  comparison.unmatched = {{"mimi-proxy", Arm::m4a, Phase::warm_disk, 4}};
  comparison.method = "relative change current/baseline - 1; 95% percentile bootstrap over requests, repeats pooled";
  comparison.cells = {{{"mimi-proxy", Arm::m4a, Phase::cold, 4},
                       {{CompareMetric::p95_e2e, 0.150, 0.190, {0.267, 0.18, 0.35}, true},
                        {CompareMetric::throughput, 30.0, 29.0, {-0.033, -0.08, 0.01}, false}},
                       true},
                      {{"mimi-proxy", Arm::m4b, Phase::cold, 4},
                       {{CompareMetric::p95_e2e, 0.071, 0.070, {-0.014, -0.05, 0.03}, false}},
                       false}};
  cur.gate->models[0].verdict = Verdict::inconclusive;
  std::string html = render_compare_html(base, cur, comparison);
  CHECK(keyed_text(html, "regressions") == "1");
  CHECK(keyed_text(html, "matched") == "2");
  CHECK(keyed_text(html, "change.mimi-proxy/m4a/cold/c4.p95_e2e") == "26.7% [18.0, 35.0]");
  CHECK(html.find("<tr class=\"regression\"><td><code>mimi-proxy/m4a/cold/c4</code></td><td>p95_e2e (ms)") !=
        std::string::npos);
  CHECK(html.find("<tr><td><code>mimi-proxy/m4b/cold/c4</code>") != std::string::npos);
  CHECK(html.find("data-model=\"mimi-proxy\" data-verdict=\"INCONCLUSIVE\"") != std::string::npos);
  CHECK(html.find("<span class=\"flag\">changed</span>") != std::string::npos);
  CHECK(html.find("mimi-proxy/m4a/warm-disk/c4") != std::string::npos);
  CHECK(html.find("runs/base&lt;1&gt;") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("the comparison page renders compare_runs output", "[html][compare]") {
  RunRecord run = load_run(fixture_run_dir());
  CompareResult r = compare_runs(run, run, {.threshold = 0.10, .resamples = 200});
  std::string html = render_compare_html(run, run, r);
  CHECK(keyed_text(html, "regressions") == "0");
  CHECK(keyed_text(html, "matched") == std::to_string(r.matched));
  CHECK(html.find("class=\"regression\"") == std::string::npos);
  CHECK(keyed_text(html, "change.mimi-proxy/m4a/cold/c4.p95_e2e").rfind("0.0% [", 0) == 0);
}

TEST_CASE("the page's intervals are the gate's: one bootstrap for both", "[html][stats]") {
  RunRecord run = fixture_run();
  run.gate = evaluate_gate(run, run.gate_options());
  std::string html = render_html_report(run);
  auto text = [](const Interval& i) { return interval_text(json{{"point", i.point}, {"lo", i.lo}, {"hi", i.hi}}); };
  std::size_t levels = 0;
  for (const ModelVerdict& m : run.gate->models)
    for (const LevelResult& l : m.levels) {
      std::string key = m.model + ".c" + std::to_string(l.concurrency);
      CHECK(keyed_text(html, "reduction." + key) == text(l.p95_e2e_reduction));
      CHECK(keyed_text(html, "gain." + key) == text(l.throughput_gain));
      ++levels;
    }
  CHECK(levels > 0);
  // Each group's throughput interval: the gate's generator, resamples, confidence and quantile rule.
  GateOptions o = run.gate_options();
  for (const auto& [key, g] : group_cells(run)) {
    Interval i = throughput_interval(
        g.throughput_pool(),
        {o.spec.bootstrap_resamples, o.seed ^ refenc::profile::stable_hash(key.label()), o.spec.confidence});
    CHECK(keyed_text(html, "tput-ci." + key.label()) == fmt::format("{:.2f} [{:.2f}, {:.2f}]", i.point, i.lo, i.hi));
  }
}

TEST_CASE("a profiled concurrency level the run lacks shows as MISSING_ARM, naming the cells", "[html]") {
  RunRecord run = fixture_run();
  run.manifest.levels[Phase::cold].push_back(16);
  run.gate = evaluate_gate(run, run.gate_options());
  REQUIRE(run.gate->models[0].model == "mimi-proxy");
  CHECK(run.gate->exit_code == gate_exit_missing_arm);
  std::string html = render_html_report(run);
  CHECK(html.find("data-model=\"mimi-proxy\" data-verdict=\"MISSING_ARM\"") != std::string::npos);
  CHECK(visible_text(html).find("m4a at concurrency 16 (mimi-proxy/m4a/cold/c16), m4b at concurrency 16 "
                                "(mimi-proxy/m4b/cold/c16)") != std::string::npos);
  CHECK(keyed_text(html, "gate.exit_code") == "12");
}
