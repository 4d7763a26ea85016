#include "profile/render/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <fmt/format.h>

namespace refenc::profile::svg {
namespace {

constexpr double char_px = 6.6;  // Approximate advance of a 12 px sans-serif character.

std::string n(double v) { return fmt::format("{:.1f}", v); }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  void finish(std::optional<double> fixed_lo, std::optional<double> fixed_hi) {
    if (fixed_lo) lo = *fixed_lo;
    if (fixed_hi) hi = *fixed_hi;
    if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
    if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::abs(lo) * 0.1);
  }
};

/// Extends [lo, hi] to the outer ticks so that the data never touches the frame.
std::vector<double> ticks_covering(Range& r) {
  auto t = nice_ticks(r.lo, r.hi);
  if (!t.empty()) {
    double step = t.size() > 1 ? t[1] - t[0] : 1;
    if (t.front() > r.lo + 1e-12) t.insert(t.begin(), t.front() - step);
    if (t.back() < r.hi - 1e-12) t.push_back(t.back() + step);
    r.lo = std::min(r.lo, t.front());
    r.hi = std::max(r.hi, t.back());
  }
  return t;
}

struct Legend {
  std::string markup;
  int height = 0;
};

/// Legend items laid out left to right, wrapping at `width`, starting at y.
template <typename Swatch>
Legend legend(const std::vector<std::pair<std::string, Swatch>>& items, double x0, double y0, double width,
              const auto& draw_swatch) {
  std::ostringstream os;
  double x = x0, y = y0;
  int rows = items.empty() ? 0 : 1;
  for (const auto& [name, swatch] : items) {
    double w = 30 + char_px * static_cast<double>(name.size()) + 16;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += 18;
      ++rows;
    }
    os << draw_swatch(swatch, x, y);
    os << "<text x=\"" << n(x + 28) << "\" y=\"" << n(y + 4) << "\" class=\"lg\">" << escape(name) << "</text>";
    x += w;
  }
  return {os.str(), rows * 18};
}

std::string open_svg(int width, double height, const std::string& label) {
  return fmt::format(
      "<svg viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "style=\"max-width:{}px\" role=\"img\" aria-label=\"{}\" class=\"chart\" font-family=\"system-ui, sans-serif\" "
      "font-size=\"12\">",
      width, n(height), width, n(height), width, escape(label));
}

const char* svg_style =
    "<style>.lg,.tk{fill:#222}.ax{stroke:#222;stroke-width:1}.gr{stroke:#ddd;stroke-width:1}"
    ".tt{font-weight:600;fill:#222}</style>";

std::string hatch_defs(const std::vector<Segment>& segments) {
  std::ostringstream os;
  os << "<defs>";
  for (std::size_t i = 0; i < segments.size(); ++i)
    if (segments[i].hatched)
      os << "<pattern id=\"hatch" << i << "\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
         << "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" << escape(segments[i].colour)
         << "\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#fff\" stroke-width=\"2.2\"/></pattern>";
  os << "</defs>";
  return os.str();
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string tick_label(double value) {
  if (std::abs(value) < 1e-12) return "0";
  std::string s = fmt::format("{:.3g}", value);
  if (s.find('e') != std::string::npos) s = fmt::format("{:.0f}", value);
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo) || count < 1) return {lo};
  double raw = (hi - lo) / count;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::floor(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    if (v >= lo - step * 1e-9) t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    if (t.size() > 50) break;
  }
  return t;
}

std::string render(const LineChart& c) {
  const double ml = 64, mr = 18, mt = c.title.empty() ? 12 : 30, plot_h = c.height - 56.0 - mt;
  const double plot_w = c.width - ml - mr;
  Range xr, yr;
  for (const auto& s : c.series)
    for (const auto& p : s.points) xr.add(p.x), yr.add(p.y);
  xr.finish(c.x_min, c.x_max);
  yr.finish(c.y_min, c.y_max);
  auto xt = c.x_max ? nice_ticks(xr.lo, xr.hi) : ticks_covering(xr);
  auto yt = c.y_max ? nice_ticks(yr.lo, yr.hi) : ticks_covering(yr);
  auto X = [&](double x) { return ml + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };
  auto Y = [&](double y) { return mt + plot_h - (y - yr.lo) / (yr.hi - yr.lo) * plot_h; };

  std::vector<std::pair<std::string, const Series*>> items;
  for (const auto& s : c.series) items.emplace_back(s.name, &s);
  Legend lg = legend(items, ml, mt + plot_h + 52, plot_w, [](const Series* s, double x, double y) {
    return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>", n(x),
                       n(y), n(x + 24), n(y), escape(s->colour), s->width,
                       s->dash.empty() ? "" : " stroke-dasharray=\"" + escape(s->dash) + "\"");
  });
  double height = mt + plot_h + 52 + lg.height + 4;

  std::ostringstream os;
  os << open_svg(c.width, height, c.title.empty() ? c.y_label + " by " + c.x_label : c.title) << svg_style;
  if (!c.title.empty()) os << "<text x=\"" << n(ml) << "\" y=\"18\" class=\"tt\">" << escape(c.title) << "</text>";
  for (double t : yt) {
    os << "<line class=\"gr\" x1=\"" << n(ml) << "\" x2=\"" << n(ml + plot_w) << "\" y1=\"" << n(Y(t)) << "\" y2=\""
       << n(Y(t)) << "\"/>";
    os << "<text class=\"tk\" x=\"" << n(ml - 6) << "\" y=\"" << n(Y(t) + 4) << "\" text-anchor=\"end\">"
       << tick_label(t) << "</text>";
  }
  for (double t : xt) {
    os << "<line class=\"ax\" x1=\"" << n(X(t)) << "\" x2=\"" << n(X(t)) << "\" y1=\"" << n(mt + plot_h) << "\" y2=\""
       << n(mt + plot_h + 4) << "\"/>";
    os << "<text class=\"tk\" x=\"" << n(X(t)) << "\" y=\"" << n(mt + plot_h + 17) << "\" text-anchor=\"middle\">"
       << tick_label(t) << "</text>";
  }
  os << "<line class=\"ax\" x1=\"" << n(ml) << "\" x2=\"" << n(ml + plot_w) << "\" y1=\"" << n(mt + plot_h)
     << "\" y2=\"" << n(mt + plot_h) << "\"/>";
  os << "<line class=\"ax\" x1=\"" << n(ml) << "\" x2=\"" << n(ml) << "\" y1=\"" << n(mt) << "\" y2=\""
     << n(mt + plot_h) << "\"/>";
  os << "<text class=\"tk\" x=\"" << n(ml + plot_w / 2) << "\" y=\"" << n(mt + plot_h + 36)
     << "\" text-anchor=\"middle\">" << escape(c.x_label) << "</text>";
  os << "<text class=\"tk\" transform=\"translate(14," << n(mt + plot_h / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">" << escape(c.y_label) << "</text>";
  for (const auto& s : c.series) {
    std::vector<Point> pts;
    for (const Point& p : s.points)
      if (std::isfinite(p.x) && std::isfinite(p.y)) pts.push_back(p);
    if (pts.empty()) continue;
    std::ostringstream d;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const Point& p = pts[i];
      if (i == 0)
        d << "M" << n(X(p.x)) << " " << n(Y(p.y));
      else if (s.step)
        d << "H" << n(X(p.x)) << "V" << n(Y(p.y));
      else
        d << "L" << n(X(p.x)) << " " << n(Y(p.y));
    }
    os << "<path d=\"" << d.str() << "\" fill=\"none\" stroke=\"" << escape(s.colour) << "\" stroke-width=\"" << s.width
       << "\"" << (s.dash.empty() ? "" : " stroke-dasharray=\"" + escape(s.dash) + "\"") << "><title>" << escape(s.name)
       << "</title></path>";
    if (s.markers)
      for (const Point& p : pts)
        os << "<circle cx=\"" << n(X(p.x)) << "\" cy=\"" << n(Y(p.y)) << "\" r=\"3.5\" fill=\"" << escape(s.colour)
           << "\"/>";
  }
  os << lg.markup << "</svg>";
  return os.str();
}

std::string render(const StackedBarChart& c) {
  double label_w = 0;
  for (const auto& r : c.rows) label_w = std::max(label_w, char_px * static_cast<double>(r.size()));
  const double ml = std::min(std::max(label_w + 14, 80.0), c.width * 0.45), mr = 70, mt = 8, bar = 18, gap = 6;
  const double plot_w = c.width - ml - mr, plot_h = static_cast<double>(c.rows.size()) * (bar + gap);
  Range xr;
  xr.add(0);
  for (const auto& row : c.values) {
    double sum = 0;
    for (double v : row) sum += std::isfinite(v) ? std::max(v, 0.0) : 0.0;
    xr.add(sum);
  }
  xr.finish(0.0, std::nullopt);
  auto xt = ticks_covering(xr);
  auto X = [&](double x) { return ml + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };

  std::vector<std::pair<std::string, std::size_t>> items;
  for (std::size_t i = 0; i < c.segments.size(); ++i)
    items.emplace_back(c.segments[i].name + (c.segments[i].hatched ? " (modelled)" : ""), i);
  Legend lg = legend(items, ml, mt + plot_h + 52, plot_w, [&](std::size_t i, double x, double y) {
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"24\" height=\"12\" fill=\"{}\"/>", n(x), n(y - 6),
                       c.segments[i].hatched ? fmt::format("url(#hatch{})", i) : escape(c.segments[i].colour));
  });
  double height = mt + plot_h + 52 + lg.height + 4;

  std::ostringstream os;
  os << open_svg(c.width, height, "stacked bars of " + c.x_label) << svg_style << hatch_defs(c.segments);
  for (double t : xt) {
    os << "<line class=\"gr\" x1=\"" << n(X(t)) << "\" x2=\"" << n(X(t)) << "\" y1=\"" << n(mt) << "\" y2=\""
       << n(mt + plot_h) << "\"/>";
    os << "<text class=\"tk\" x=\"" << n(X(t)) << "\" y=\"" << n(mt + plot_h + 17) << "\" text-anchor=\"middle\">"
       << tick_label(t) << "</text>";
  }
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    double y = mt + static_cast<double>(r) * (bar + gap) + gap / 2;
    os << "<text class=\"tk\" x=\"" << n(ml - 6) << "\" y=\"" << n(y + bar / 2 + 4) << "\" text-anchor=\"end\">"
       << escape(c.rows[r]) << "</text>";
    double x = 0, sum = 0;
    for (std::size_t s = 0; s < c.segments.size() && r < c.values.size() && s < c.values[r].size(); ++s) {
      double v = std::isfinite(c.values[r][s]) ? std::max(c.values[r][s], 0.0) : 0.0;
      if (v <= 0) continue;
      os << "<rect x=\"" << n(X(x)) << "\" y=\"" << n(y) << "\" width=\"" << n(X(x + v) - X(x)) << "\" height=\""
         << n(bar) << "\" fill=\""
         << (c.segments[s].hatched ? fmt::format("url(#hatch{})", s) : escape(c.segments[s].colour)) << "\"><title>"
         << escape(c.rows[r] + ": " + c.segments[s].name + " " + tick_label(v) + " (" + c.x_label + ")")
         << "</title></rect>";
      x += v;
      sum += v;
    }
    os << "<text class=\"tk\" x=\"" << n(X(sum) + 4) << "\" y=\"" << n(y + bar / 2 + 4) << "\">" << tick_label(sum)
       << "</text>";
  }
  os << "<line class=\"ax\" x1=\"" << n(ml) << "\" x2=\"" << n(ml + plot_w) << "\" y1=\"" << n(mt + plot_h)
     << "\" y2=\"" << n(mt + plot_h) << "\"/>";
  os << "<line class=\"ax\" x1=\"" << n(ml) << "\" x2=\"" << n(ml) << "\" y1=\"" << n(mt) << "\" y2=\""
     << n(mt + plot_h) << "\"/>";
  os << "<text class=\"tk\" x=\"" << n(ml + plot_w / 2) << "\" y=\"" << n(mt + plot_h + 36)
     << "\" text-anchor=\"middle\">" << escape(c.x_label) << "</text>";
  os << lg.markup << "</svg>";
  return os.str();
}

std::string render(const IntervalChart& c) {
  double label_w = 0;
  for (const auto& r : c.rows)
    label_w = std::max(label_w, (r.highlight ? 7.4 : char_px) * static_cast<double>(r.label.size()));
  const double ml = std::min(std::max(label_w + 14, 80.0), c.width * 0.45), mr = 24, mt = 8, row_h = 24;
  const double plot_w = c.width - ml - mr, plot_h = static_cast<double>(c.rows.size()) * row_h;
  Range xr;
  for (const auto& r : c.rows) {
    xr.add(r.point);
    if (r.has_interval) xr.add(r.lo), xr.add(r.hi);
    for (double e : r.extra) xr.add(e);
  }
  for (const auto& l : c.lines) xr.add(l.value);
  xr.finish(c.x_min, c.x_max);
  auto xt = ticks_covering(xr);
  auto X = [&](double x) { return ml + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };

  std::vector<std::pair<std::string, const ReferenceLine*>> items;
  for (const auto& l : c.lines)
    if (!l.label.empty()) items.emplace_back(l.label, &l);
  Legend lg = legend(items, ml, mt + plot_h + 52, plot_w, [](const ReferenceLine* l, double x, double y) {
    return fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"{}\"/>",
        n(x), n(y), n(x + 24), n(y), escape(l->colour), escape(l->dash));
  });
  double height = mt + plot_h + 52 + lg.height + 4;

  std::ostringstream os;
  os << open_svg(c.width, height, "intervals of " + c.x_label) << svg_style;
  for (double t : xt) {
    os << "<line class=\"gr\" x1=\"" << n(X(t)) << "\" x2=\"" << n(X(t)) << "\" y1=\"" << n(mt) << "\" y2=\""
       << n(mt + plot_h) << "\"/>";
    os << "<text class=\"tk\" x=\"" << n(X(t)) << "\" y=\"" << n(mt + plot_h + 17) << "\" text-anchor=\"middle\">"
       << tick_label(t) << "</text>";
  }
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const IntervalRow& r = c.rows[i];
    double y = mt + (static_cast<double>(i) + 0.5) * row_h;
    bool finite = std::isfinite(r.point) && (!r.has_interval || (std::isfinite(r.lo) && std::isfinite(r.hi)));
    if (r.highlight)
      os << "<rect x=\"0\" y=\"" << n(y - row_h / 2) << "\" width=\"" << c.width << "\" height=\"" << n(row_h)
         << "\" fill=\"#F9E0CF\"/>";
    os << "<text class=\"tk\" x=\"" << n(ml - 6) << "\" y=\"" << n(y + 4) << "\" text-anchor=\"end\""
       << (r.highlight ? " font-weight=\"700\"" : "") << ">" << escape(r.label) << "</text>";
    if (!finite) continue;
    std::string col = escape(r.colour);
    if (r.has_interval) {
      os << "<line x1=\"" << n(X(r.lo)) << "\" x2=\"" << n(X(r.hi)) << "\" y1=\"" << n(y) << "\" y2=\"" << n(y)
         << "\" stroke=\"" << col << "\" stroke-width=\"2\"/>";
      for (double e : {r.lo, r.hi})
        os << "<line x1=\"" << n(X(e)) << "\" x2=\"" << n(X(e)) << "\" y1=\"" << n(y - 5) << "\" y2=\"" << n(y + 5)
           << "\" stroke=\"" << col << "\" stroke-width=\"2\"/>";
    }
    for (double e : r.extra)
      if (std::isfinite(e))
        os << "<circle cx=\"" << n(X(e)) << "\" cy=\"" << n(y) << "\" r=\"2.5\" fill=\"none\" stroke=\"" << col
           << "\"/>";
    os << "<rect x=\"" << n(X(r.point) - 4.5) << "\" y=\"" << n(y - 4.5) << "\" width=\"9\" height=\"9\" fill=\"" << col
       << "\"><title>" << escape(r.label) << ": " << tick_label(r.point);
    if (r.has_interval) os << " [" << tick_label(r.lo) << ", " << tick_label(r.hi) << "]";
    os << "</title></rect>";
  }
  for (const auto& l : c.lines)
    os << "<line x1=\"" << n(X(l.value)) << "\" x2=\"" << n(X(l.value)) << "\" y1=\"" << n(mt) << "\" y2=\""
       << n(mt + plot_h) << "\" stroke=\"" << escape(l.colour) << "\" stroke-width=\"1.5\" stroke-dasharray=\""
       << escape(l.dash) << "\"/>";
  os << "<line class=\"ax\" x1=\"" << n(ml) << "\" x2=\"" << n(ml + plot_w) << "\" y1=\"" << n(mt + plot_h)
     << "\" y2=\"" << n(mt + plot_h) << "\"/>";
  os << "<text class=\"tk\" x=\"" << n(ml + plot_w / 2) << "\" y=\"" << n(mt + plot_h + 36)
     << "\" text-anchor=\"middle\">" << escape(c.x_label) << "</text>";
  os << lg.markup << "</svg>";
  return os.str();
}

}  // namespace refenc::profile::svg
