#include <catch2/catch.hpp>

#include "profile/render/svg_chart.hpp"

using namespace refenc::profile;

TEST_CASE("escape covers the five HTML metacharacters", "[html][svg]") {
  CHECK(svg::escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(svg::escape("plain") == "plain");
}

TEST_CASE("nice ticks are round and cover the range", "[html][svg]") {
  auto unit = svg::nice_ticks(0, 1);
  std::vector<double> expected{0, 0.2, 0.4, 0.6, 0.8, 1.0};
  REQUIRE(unit.size() == expected.size());
  for (std::size_t i = 0; i < unit.size(); ++i) CHECK(unit[i] == Approx(expected[i]).margin(1e-12));
  CHECK(svg::nice_ticks(0, 150) == std::vector<double>{0, 50, 100, 150});
  auto t = svg::nice_ticks(-4, 9);
  CHECK(t.front() >= -4);
  CHECK(t.back() <= 9);
  CHECK(svg::nice_ticks(3, 3) == std::vector<double>{3});
  CHECK(svg::tick_label(0.30000000000000004) == "0.3");
  CHECK(svg::tick_label(1e-17) == "0");
  CHECK(svg::tick_label(2500) == "2500");
}

TEST_CASE("a line chart has both axis titles, a legend and one path per series", "[html][svg]") {
  svg::LineChart c{.title = "t<1>", .x_label = "latency (ms)", .y_label = "fraction"};
  c.series.push_back({.name = "M4a & co", .points = {{1, 0}, {2, 0.5}, {3, 1}}, .step = true});
  c.series.push_back({.name = "M4b", .colour = svg::palette::vermillion, .dash = "7 4", .points = {{1, 0}, {4, 1}}});
  std::string s = svg::render(c);
  CHECK(s.rfind("<svg ", 0) == 0);
  CHECK(s.find("latency (ms)") != std::string::npos);
  CHECK(s.find(">fraction<") != std::string::npos);
  CHECK(s.find("t&lt;1&gt;") != std::string::npos);
  CHECK(s.find("M4a &amp; co") != std::string::npos);
  CHECK(s.find("stroke-dasharray=\"7 4\"") != std::string::npos);
  std::size_t paths = 0;
  for (std::size_t at = 0; (at = s.find("<path", at)) != std::string::npos; ++at) ++paths;
  CHECK(paths == 2);
  CHECK(s.find("NaN") == std::string::npos);
  CHECK(s.find("nan") == std::string::npos);
}

TEST_CASE("charts without data or with degenerate values still render finite coordinates", "[html][svg]") {
  svg::LineChart empty{.x_label = "x (s)", .y_label = "y (%)"};
  std::string a = svg::render(empty);
  svg::StackedBarChart bars{.x_label = "ms"};
  bars.segments = {{"a", svg::palette::blue}, {"b", svg::palette::green, true}};
  bars.rows = {"zero", "one"};
  bars.values = {{0, 0}, {1, 2}};
  std::string b = svg::render(bars);
  CHECK(b.find("url(#hatch1)") != std::string::npos);
  CHECK(b.find("b (modelled)") != std::string::npos);
  svg::IntervalChart iv{.x_label = "%"};
  iv.rows.push_back({.label = "same", .point = 5, .lo = 5, .hi = 5});
  iv.rows.push_back({.label = "bad", .point = std::numeric_limits<double>::quiet_NaN(), .has_interval = false});
  std::string c = svg::render(iv);
  for (const std::string& s : {a, b, c}) CHECK(s.find("nan") == std::string::npos);
  CHECK(c.find("same") != std::string::npos);
}
