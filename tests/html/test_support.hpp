// Helpers shared by the HTML report tests: the fixture run, a scratch folder, and reading the text of
// an element carrying a data-key attribute out of an HTML page or a browser's DOM dump.
//
//   nlohmann::json report = fixture_report();
//   std::string text = keyed_text(html, "tput.mimi-proxy/m4a/cold/c1/r0");   // "10.39"
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace refenc::profile::test {

inline std::string fixture_run_dir() { return std::string(REFENC_HTML_FIXTURES) + "/run"; }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

inline nlohmann::json fixture_report() { return nlohmann::json::parse(read_text(fixture_run_dir() + "/report.json")); }

/// A fresh empty folder under the system temp folder, removed by the destructor.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / fmt::format("refenc-html-{:x}", (std::uint64_t{rd()} << 32) | rd());
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

/// Text content of the first element whose data-key attribute equals `key` ("" when absent).
inline std::string keyed_text(const std::string& html, const std::string& key) {
  std::string needle = "data-key=\"" + key + "\"";
  auto at = html.find(needle);
  if (at == std::string::npos) return {};
  auto open = html.find('>', at);
  auto close = html.find('<', open);
  if (open == std::string::npos || close == std::string::npos) return {};
  return html.substr(open + 1, close - open - 1);
}

/// "41.3% [30.2, 50.8]": how the page writes an interval of a fraction.
inline std::string interval_text(const nlohmann::json& i) {
  return fmt::format("{:.1f}% [{:.1f}, {:.1f}]", 100 * i.at("point").get<double>(), 100 * i.at("lo").get<double>(),
                     100 * i.at("hi").get<double>());
}

}  // namespace refenc::profile::test
