#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "core/error.hpp"
#include "profile/compare.hpp"
#include "profile/html_report.hpp"
#include "profile/run_report.hpp"
#include "test_support.hpp"

using namespace refenc::profile;
using namespace refenc::profile::test;
using nlohmann::json;

namespace {

std::string render_fixture(bool with_requests = true) {
  json report = fixture_report();
  RequestRows rows = read_request_rows(fixture_run_dir() + "/requests.jsonl");
  return render_html_report(report, with_requests ? &rows : nullptr);
}

/// Text of the page with tags removed and the common entities decoded.
std::string visible_text(const std::string& html) {
  std::string t = std::regex_replace(html, std::regex("<[^>]*>"), " ");
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

  json report = fixture_report();
  report["gate"]["models"][0]["model"] = "m\"><img src=x onerror=alert(1)>";
  report["gate"]["models"][0]["reason"] = "</td></tr></table><script>alert(3)</script>";
  report["manifest"]["name"] = "</title><script>alert(4)</script>";
  std::string bad = render_html_report(report);
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
    CHECK(std::regex_search(fig, std::regex("\\((ms|%|req/s|s)\\)")));
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

TEST_CASE("a report missing most fields still renders", "[html]") {
  json minimal{{"schema", "refenc-profile-report"}, {"cells", json::array()}, {"models", json::array()}};
  std::string html = render_html_report(minimal);
  CHECK(html.find("The report holds no gate verdict") != std::string::npos);
  json weird{{"gate", {{"models", {{{"model", 3}, {"verdict", json::array()}}}}}}, {"cells", {{{"id", 1}}}}};
  CHECK_NOTHROW(render_html_report(weird));
  CHECK_THROWS_AS(render_html_report(json::array()), refenc::Error);
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
  std::ofstream(dir.path / "requests.jsonl") << "{\"cell\": \"a\"}\nnot json\n";
  CHECK_THROWS_WITH(write_html_report(dir.str()), Catch::Contains("requests.jsonl: line 2"));
}

TEST_CASE("the comparison page highlights regressions", "[html][compare]") {
  json base = fixture_report(), cur = fixture_report();
  json comparison{
      {"threshold", 0.10},
      {"matched", 2},
      {"regressions", 1},
      {"baseline", "runs/base<1>"},
      {"current", "runs/cur"},
      {"unmatched", {"mimi-proxy/m4a/warm-disk/c4"}},
      {"method", "relative change current/baseline - 1; 95% percentile bootstrap over requests, repeats pooled"},
      {"cells",
       {{{"cell", "mimi-proxy/m4a/cold/c4"},
         {"regression", true},
         {"metrics",
          {{"p95_e2e", {{"baseline", 0.150}, {"current", 0.190}, {"change", {{"point", 0.267}, {"lo", 0.18}, {"hi", 0.35}}}, {"regression", true}}},
           {"throughput", {{"baseline", 30.0}, {"current", 29.0}, {"change", {{"point", -0.033}, {"lo", -0.08}, {"hi", 0.01}}}, {"regression", false}}}}}},
        {{"cell", "mimi-proxy/m4b/cold/c4"},
         {"regression", false},
         {"metrics",
          {{"p95_e2e", {{"baseline", 0.071}, {"current", 0.070}, {"change", {{"point", -0.014}, {"lo", -0.05}, {"hi", 0.03}}}, {"regression", false}}}}}}}}};
  cur["gate"]["models"][0]["verdict"] = "INCONCLUSIVE";
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
  CHECK_THROWS_AS(render_compare_html(base, cur, nullptr), refenc::Error);
}

TEST_CASE("the comparison page renders compare_runs output", "[html][compare]") {
  LoadedRun run = load_run(fixture_run_dir());
  CompareResult r = compare_runs(run, run, {.threshold = 0.10, .resamples = 200});
  std::string html = render_compare_html(run.report, run.report, r.json);
  CHECK(keyed_text(html, "regressions") == "0");
  CHECK(keyed_text(html, "matched") == std::to_string(r.matched));
  CHECK(html.find("class=\"regression\"") == std::string::npos);
  CHECK(keyed_text(html, "change.mimi-proxy/m4a/cold/c4.p95_e2e").rfind("0.0% [", 0) == 0);
}
