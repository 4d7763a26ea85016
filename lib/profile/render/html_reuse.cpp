// The run page's reuse section: each cell's measured memory-tier hit ratio beside the prediction of the
// LRU miss-ratio curve of its own request trace, and the curves of the cells that had any reuse.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "profile/render/html_page.hpp"

namespace refenc::profile::html {

std::string reuse_section(const RunRecord& run) {
  std::vector<const Cell*> cells;
  for (const Cell& c : run.cells)
    if (c.reuse) cells.push_back(&c);
  if (cells.empty()) return "";
  std::ostringstream os;
  os << "<section id=\"reuse\"><h2>Memory-tier reuse: measured hit ratio against the miss-ratio curve</h2>\n"
        "<p>Measured: memory hits over the requests with a cache key. Predicted: the LRU miss-ratio curve of the "
        "cell's own request trace (one pass of stack distances, requests in send order) at the cell's "
        "<code>max_bytes</code> and <code>max_items</code>. The curve assumes a tier that starts empty and sees no "
        "concurrency (merges and batches are not hits): compare at concurrency 1.</p>\n";
  os << "<div class=\"tw\"><table><thead><tr><th>cell</th><th class=\"n\">requests</th><th class=\"n\">distinct "
        "keys</th><th class=\"n\">working set (bytes)</th><th class=\"n\">max_bytes</th><th class=\"n\">hit ratio"
        "</th><th class=\"n\">predicted</th><th class=\"n\">difference (points)</th></tr></thead><tbody>\n";
  for (const Cell* c : cells) {
    const CacheReuse& r = *c->reuse;
    os << "<tr><td>" << e(c->key.id()) << "</td><td class=\"n\">" << r.requests << "</td><td class=\"n\">" << r.distinct
       << "</td><td class=\"n\">" << r.working_set_bytes << "</td><td class=\"n\">" << r.max_bytes
       << "</td><td class=\"n\" data-key=\"hit_ratio." << e(c->key.id()) << "\">" << pct(r.hit_ratio())
       << "</td><td class=\"n\">" << pct(r.predicted_hit_ratio) << "</td><td class=\"n\">"
       << fmt::format("{:+.1f}", 100 * (r.hit_ratio() - r.predicted_hit_ratio)) << "</td></tr>\n";
  }
  os << "</tbody></table></div>\n<div class=\"grid\">\n";
  int charts = 0;
  for (const Cell* c : cells) {
    const CacheReuse& r = *c->reuse;
    if (r.points.size() < 2 || (r.hits == 0 && r.predicted_hit_ratio == 0)) continue;  // nothing reused
    if (++charts > 8) break;                                                           // the table has them all
    svg::LineChart chart{.title = c->key.id(), .x_label = "memory tier max_bytes (MiB)", .y_label = "hit ratio"};
    chart.y_min = 0, chart.y_max = 1, chart.x_min = 0;
    svg::Series curve{.name = "miss-ratio curve (predicted)", .colour = svg::palette::blue, .step = true};
    for (const auto& [bytes, hit] : r.points) curve.points.push_back({static_cast<double>(bytes) / (1 << 20), hit});
    chart.series.push_back(std::move(curve));
    chart.series.push_back({.name = "measured at the cell's max_bytes",
                            .colour = svg::palette::vermillion,
                            .points = {{static_cast<double>(r.max_bytes) / (1 << 20), r.hit_ratio()}},
                            .markers = true});
    os << figure(svg::render(chart), e(fmt::format("{}: measured {} against {} predicted at {} bytes", c->key.id(),
                                                   pct(r.hit_ratio()), pct(r.predicted_hit_ratio), r.max_bytes)));
  }
  os << "</div></section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
