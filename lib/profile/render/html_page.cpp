#include "profile/render/html_page.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

namespace refenc::profile::html {
namespace {

const char* page_css = R"CSS(
:root{--fg:#1b1b1b;--muted:#555;--rule:#d6d6d6;--go:#009E73;--nogo:#D55E00;--inc:#E69F00;--na:#8C8C8C;--miss:#CC79A7}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);
  margin:0 auto;max-width:1180px;padding:1.2rem 1.5rem 3rem;line-height:1.45;font-size:15px;background:#fff}
h1{font-size:1.6rem;margin:.2rem 0 .3rem}h2{font-size:1.25rem;margin:2rem 0 .6rem;padding-bottom:.2rem;
  border-bottom:2px solid var(--fg)}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.sub{color:var(--muted);margin:0 0 .8rem}
nav{font-size:.9rem;margin:.4rem 0 1rem}nav a{margin-right:.9rem;color:#0072B2}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-size:.86rem;width:100%}
th,td{border-bottom:1px solid var(--rule);padding:.25rem .45rem;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{display:inline-block;white-space:nowrap;font-weight:700;padding:.05rem .5rem;border-radius:.25rem;color:#fff;
  letter-spacing:.02em;-webkit-print-color-adjust:exact;print-color-adjust:exact}
.v-GO{background:var(--go)}.v-NO-GO{background:var(--nogo)}.v-INCONCLUSIVE{background:var(--inc);color:#000}
.v-NOT-APPLICABLE{background:var(--na)}.v-MISSING-ARM{background:var(--miss);color:#000}
.card{border:1px solid var(--rule);border-left:6px solid var(--na);border-radius:.3rem;padding:.6rem .9rem;margin:.8rem 0}
.card.c-GO{border-left-color:var(--go)}.card.c-NO-GO{border-left-color:var(--nogo)}
.card.c-INCONCLUSIVE{border-left-color:var(--inc)}.card.c-MISSING-ARM{border-left-color:var(--miss)}
.card h3{margin:.1rem 0 .3rem;font-size:1.15rem}.grade{color:var(--muted);font-size:.9rem}
.reason{margin:.3rem 0}
.note{background:#f6f6f6;border-left:4px solid var(--na);padding:.4rem .7rem;margin:.5rem 0;font-size:.9rem}
.warn{background:#FFF4DC;border-left:4px solid var(--inc);padding:.4rem .7rem;margin:.5rem 0}
.bad{background:#F9E0CF;border-left:4px solid var(--nogo);padding:.4rem .7rem;margin:.5rem 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:.8rem 1.2rem}
figure{margin:.4rem 0 1rem;break-inside:avoid;page-break-inside:avoid}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.84rem;color:var(--muted);margin-top:.2rem}
tr.regression td{background:#F9E0CF;font-weight:600}
.flag{font-weight:700;color:#8a2f00}
code{font-size:.85em;background:#f3f3f3;padding:0 .2em;border-radius:.15rem;overflow-wrap:anywhere}
td.id code{white-space:nowrap}.tw{overflow-x:auto;margin:.4rem 0 1rem}.tw table{margin:0;font-size:.8rem}ul.w{font-size:.85rem}
.grid>.note{align-self:start}
footer{margin-top:2rem;color:var(--muted);font-size:.8rem}
@media (max-width:700px){.grid{grid-template-columns:1fr}body{padding:.8rem}}
@media print{body{max-width:none;padding:0;font-size:10.5pt}h3{break-after:avoid;page-break-after:avoid}.tw{overflow:visible}td.id code{white-space:normal}nav{display:none}h2{break-after:avoid;page-break-after:avoid}
  .card,table,figure{break-inside:avoid;page-break-inside:avoid}.grid{grid-template-columns:1fr 1fr}
  a{color:inherit;text-decoration:none}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
)CSS";

}  // namespace

std::string pct(double v) { return fmt::format("{:.1f}%", 100 * v); }
std::string ms(double seconds) { return fmt::format("{:.1f}", 1000 * seconds); }
std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

std::string interval_text(const Interval& i) {
  return fmt::format("{} [{}, {}]", pct(i.point), fixed(100 * i.lo, 1), fixed(100 * i.hi, 1));
}

std::string arm_label(Arm arm) { return arm == Arm::m4b ? "M4b" : "M4a"; }

const char* arm_colour(Arm arm) { return arm == Arm::m4b ? svg::palette::vermillion : svg::palette::blue; }

std::string phase_dash(Phase phase) {
  switch (phase) {
    case Phase::cold: return "";
    case Phase::warm: return "7 4";
    case Phase::warm_disk: return "2 3";
    case Phase::warm_shared: return "7 3 2 3";
  }
  return "";
}

std::string verdict_class(Verdict verdict) {
  std::string cls(to_string(verdict));
  std::replace(cls.begin(), cls.end(), '_', '-');
  return cls;
}

std::string verdict_badge(Verdict verdict, const std::string& model) {
  std::string name(to_string(verdict));
  std::string attrs = model.empty() ? "" : " data-model=\"" + e(model) + "\" data-verdict=\"" + e(name) + "\"";
  return "<span class=\"verdict v-" + e(verdict_class(verdict)) + "\"" + attrs + ">" + e(name) + "</span>";
}

std::string group_label(const GroupKey& key) {
  return fmt::format("{} {} c{}", arm_label(key.arm), to_string(key.phase), key.concurrency);
}

std::string page(const std::string& title, const std::string& body) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
     << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">\n"
     << "<title>" << e(title) << "</title>\n<style>" << page_css << "</style>\n</head>\n<body>\n"
     << body << "</body>\n</html>\n";
  return os.str();
}

std::string figure(const std::string& svg_markup, const std::string& caption, const std::string& id) {
  return "<figure" + (id.empty() ? std::string() : " id=\"" + e(id) + "\"") + ">" + svg_markup + "<figcaption>" +
         caption + "</figcaption></figure>\n";
}

std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::ostringstream os;
  os << "<table><tbody>\n";
  for (const auto& [k, v] : rows) os << "<tr><th>" << e(k) << "</th><td>" << e(v) << "</td></tr>\n";
  os << "</tbody></table>\n";
  return os.str();
}

std::vector<std::string> model_names(const RunRecord& run) {
  std::vector<std::string> names;
  for (const ModelEntry& m : run.models) names.push_back(m.name);
  for (const Cell& c : run.cells)
    if (std::find(names.begin(), names.end(), c.key.model) == names.end()) names.push_back(c.key.model);
  return names;
}

std::vector<const CellGroup*> ordered_groups(const RunRecord& run, const std::map<GroupKey, CellGroup>& groups) {
  std::vector<std::string> names;
  for (const ModelEntry& m : run.models) names.push_back(m.name);
  auto rank = [&](const GroupKey& k) {
    auto it = std::find(names.begin(), names.end(), k.model);
    int model_rank = it == names.end() ? 1 << 20 : static_cast<int>(it - names.begin());
    return std::make_tuple(model_rank, k.concurrency, static_cast<int>(k.arm), static_cast<int>(k.phase), k.model);
  };
  std::vector<const CellGroup*> out;
  for (const auto& [k, g] : groups) out.push_back(&g);
  std::stable_sort(out.begin(), out.end(),
                   [&](const CellGroup* a, const CellGroup* b) { return rank(a->key) < rank(b->key); });
  return out;
}

}  // namespace refenc::profile::html
