// Inline SVG charts for the HTML report: line/step charts (latency CDFs, utilisation over time),
// stacked horizontal bars (stage breakdowns) and interval rows (estimates with confidence intervals).
// Each function returns one self-contained <svg> element with axes, tick labels with units, and a
// legend; every string it places in the SVG is escaped. No JavaScript, no external resources.
//
//   svg::LineChart c{.x_label = "E2E latency (ms)", .y_label = "fraction of requests"};
//   c.series.push_back({.name = "M4a cold", .colour = svg::palette::blue, .points = {{1, 0.5}, {2, 1}}, .step = true});
//   std::string markup = svg::render(c);
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace refenc::profile::svg {

/// Okabe-Ito colours: distinguishable under the common colour-vision deficiencies.
namespace palette {
inline constexpr const char* black = "#000000";
inline constexpr const char* orange = "#E69F00";
inline constexpr const char* sky_blue = "#56B4E9";
inline constexpr const char* green = "#009E73";
inline constexpr const char* yellow = "#F0E442";
inline constexpr const char* blue = "#0072B2";
inline constexpr const char* vermillion = "#D55E00";
inline constexpr const char* purple = "#CC79A7";
inline constexpr const char* grey = "#8C8C8C";
}  // namespace palette

/// Escapes &, <, >, " and ' for HTML/SVG text and attribute values.
std::string escape(const std::string& text);

/// Short number for a tick label: up to 3 significant digits, no trailing zeros.
std::string tick_label(double value);

/// About `count` evenly spaced round tick values covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int count = 5);

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;
  std::string colour = palette::blue;
  std::string dash;  ///< SVG stroke-dasharray ("" = solid).
  std::vector<Point> points;
  bool step = false;     ///< Draw as a right-continuous step (a CDF, a per-interval mean).
  bool markers = false;  ///< Draw a marker at each point.
  double width = 2;
};

struct LineChart {
  std::string title;             ///< Short heading inside the chart (optional).
  std::string x_label, y_label;  ///< Axis titles, with units.
  std::vector<Series> series;
  std::optional<double> x_min, x_max, y_min, y_max;  ///< Fixed ranges; data range when unset.
  int width = 560, height = 300;
};

struct Segment {
  std::string name;
  std::string colour;
  bool hatched = false;  ///< Hatching marks a modelled (not measured) quantity.
};

struct StackedBarChart {
  std::string x_label;  ///< Value axis title, with units.
  std::vector<Segment> segments;
  std::vector<std::string> rows;            ///< One label per bar.
  std::vector<std::vector<double>> values;  ///< values[row][segment], >= 0.
  int width = 1000;
};

struct IntervalRow {
  std::string label;
  double point = 0, lo = 0, hi = 0;
  bool has_interval = true;
  std::string colour = palette::blue;
  std::vector<double> extra;  ///< Further points drawn small (e.g. single repeats).
  bool highlight = false;     ///< Emphasised row (e.g. a regression).
};

struct ReferenceLine {
  double value = 0;
  std::string label;
  std::string colour = palette::black;
  std::string dash = "4 3";
};

struct IntervalChart {
  std::string x_label;  ///< Value axis title, with units.
  std::vector<IntervalRow> rows;
  std::vector<ReferenceLine> lines;
  std::optional<double> x_min, x_max;
  int width = 1000;
};

std::string render(const LineChart& chart);
std::string render(const StackedBarChart& chart);
std::string render(const IntervalChart& chart);

}  // namespace refenc::profile::svg
