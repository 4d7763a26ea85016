// Opens the report page in headless Chromium: no console error (a blocked resource or script would log
// one), the verdicts and key numbers in the rendered DOM match report.json, and a screenshot is saved
// under the build folder. Skipped, with a message, when Chromium is not installed.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "profile/record/run_folder.hpp"
#include "profile/render/html_report.hpp"
#include "test_support.hpp"

using namespace refenc::profile;
using namespace refenc::profile::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string chromium_path() {
  if (const char* env = std::getenv("REFENC_CHROMIUM")) return env;
  return "/usr/bin/chromium";
}

struct BrowserRun {
  int status = -1;
  std::string dom, log;
};

/// Runs Chromium headless on `page` with `mode` ("--dump-dom" or "--screenshot=FILE") and a fresh profile.
BrowserRun run_chromium(const fs::path& page, const std::string& mode, const fs::path& work) {
  ScratchDir profile;
  fs::path out = work / "chromium.out", err = work / "chromium.err";
  std::string cmd = "timeout 120 '" + chromium_path() +
                    "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--enable-logging=stderr --v=0 --window-size=1280,2400 --user-data-dir='" +
                    profile.str() + "' " + mode + " 'file://" + fs::absolute(page).string() + "' >'" + out.string() +
                    "' 2>'" + err.string() + "'";
  BrowserRun r;
  r.status = std::system(cmd.c_str());
  r.dom = read_text(out.string());
  r.log = read_text(err.string());
  return r;
}

/// Console messages Chromium logged for the page (a CSP violation, a script error, a failed load).
std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) lines.push_back(line);
  return lines;
}

void check_page_in_browser(const fs::path& page, const fs::path& screenshot, const fs::path& work,
                           const std::function<void(const std::string& dom)>& check_dom) {
  BrowserRun dom = run_chromium(page, "--dump-dom", work);
  INFO("chromium stderr:\n" << dom.log);
  REQUIRE(dom.status == 0);
  REQUIRE(dom.dom.find("</html>") != std::string::npos);
  CHECK(console_lines(dom.log).empty());
  check_dom(dom.dom);

  fs::remove(screenshot);
  BrowserRun shot = run_chromium(page, "--screenshot=" + screenshot.string(), work);
  REQUIRE(shot.status == 0);
  CHECK(console_lines(shot.log).empty());
  REQUIRE(fs::exists(screenshot));
  CHECK(fs::file_size(screenshot) > 20000);
  std::cout << "html test artifact: " << fs::absolute(screenshot).string() << "\n";
}

}  // namespace

TEST_CASE("the report renders in headless Chromium with the report's verdicts and numbers", "[html][browser]") {
  if (!fs::exists(chromium_path())) {
    WARN("browser test skipped: " << chromium_path() << " not found (install Debian's chromium package)");
    return;
  }
  fs::path artifacts = REFENC_HTML_ARTIFACTS;
  fs::create_directories(artifacts);
  json report = fixture_report();
  fs::path page = artifacts / "report.html";
  write_html_report(fixture_run_dir(), page.string());

  check_page_in_browser(page, artifacts / "report.png", artifacts, [&](const std::string& dom) {
    CHECK(dom.find("<script") == std::string::npos);
    for (const json& m : report["gate"]["models"]) {
      std::string model = m["model"];
      CHECK(dom.find("data-model=\"" + model + "\" data-verdict=\"" + m["verdict"].get<std::string>() + "\">" +
                     m["verdict"].get<std::string>() + "<") != std::string::npos);
      for (const json& c : m.value("concurrency", json::array())) {
        std::string key = model + ".c" + std::to_string(c["concurrency"].get<int>());
        CHECK(keyed_text(dom, "reduction." + key) == interval_text(c["p95_e2e_reduction"]));
        CHECK(keyed_text(dom, "gain." + key) == interval_text(c["throughput_gain"]));
      }
    }
    CHECK(keyed_text(dom, "threshold.latency") ==
          fmt::format("{:.1f}%", 100 * report["gate"]["options"]["latency_reduction"].get<double>()));
    CHECK(keyed_text(dom, "threshold.throughput") ==
          fmt::format("{:.1f}%", 100 * report["gate"]["options"]["throughput_gain"].get<double>()));
    for (const json& c : report["cells"])
      CHECK(keyed_text(dom, "tput." + c["id"].get<std::string>()) ==
            fmt::format("{:.2f}", c["throughput_rps"].get<double>()));
    // The injected host name stays text.
    CHECK(dom.find("bench-&lt;script&gt;") != std::string::npos);
  });
}

TEST_CASE("the comparison page renders in headless Chromium", "[html][browser][compare]") {
  if (!fs::exists(chromium_path())) {
    WARN("browser test skipped: " << chromium_path() << " not found (install Debian's chromium package)");
    return;
  }
  fs::path artifacts = REFENC_HTML_ARTIFACTS;
  fs::create_directories(artifacts);
  RunRecord run = load_run(fixture_run_dir());
  CompareResult comparison;
  comparison.threshold = 0.1;
  comparison.matched = 1;
  comparison.regressions = 1;
  comparison.baseline_dir = "base";
  comparison.current_dir = "cur";
  comparison.method = "fixture";
  comparison.cells = {{{"mimi-proxy", Arm::m4a, Phase::cold, 4},
                       {{CompareMetric::p95_e2e, 0.15, 0.19, {0.267, 0.18, 0.35}, true}},
                       true}};
  fs::path page = artifacts / "compare.html";
  { std::ofstream(page) << render_compare_html(run, run, comparison); }
  check_page_in_browser(page, artifacts / "compare.png", artifacts, [&](const std::string& dom) {
    CHECK(keyed_text(dom, "regressions") == "1");
    CHECK(keyed_text(dom, "change.mimi-proxy/m4a/cold/c4.p95_e2e") == "26.7% [18.0, 35.0]");
    CHECK(dom.find("REGRESSION") != std::string::npos);
  });
}
