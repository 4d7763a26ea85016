// Internal to the HTML report: the page shell (CSS, header, figures, tables) and the small formatting
// helpers the sections share, so that the run page and the comparison page look and read alike.
//
//   std::string body = html::figure(svg::render(chart), "Measured: ...");
//   std::string page = html::page("refenc profile: nightly", body);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "profile/record/cell_groups.hpp"
#include "profile/record/labels.hpp"
#include "profile/record/run_record.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/svg_chart.hpp"

namespace refenc::profile::html {

/// Escaped text.
inline std::string e(const std::string& s) { return svg::escape(s); }
inline std::string e(std::string_view s) { return svg::escape(std::string(s)); }
inline std::string e(const char* s) { return svg::escape(std::string(s)); }
/// "12.3%" of a fraction.
std::string pct(double fraction);
/// Milliseconds of seconds, one decimal.
std::string ms(double seconds);
/// Fixed-point text.
std::string fixed(double v, int digits);
/// "41.3% [30.2, 50.8]" of an interval of fractions.
std::string interval_text(const Interval& i);

std::string arm_label(Arm arm);       ///< "M4a", "M4b".
const char* arm_colour(Arm arm);      ///< Blue M4a, vermillion M4b.
std::string phase_dash(Phase phase);  ///< Solid cold, dashed warm, dotted warm-disk, dash-dot warm-shared.
/// A verdict badge; with `model`, carrying data-model and data-verdict attributes.
std::string verdict_badge(Verdict verdict, const std::string& model = {});
/// The CSS class suffix of a verdict ("NO-GO", "MISSING-ARM").
std::string verdict_class(Verdict verdict);

/// A group's label on the page: "M4a cold c8".
std::string group_label(const GroupKey& key);

/// The whole page.
std::string page(const std::string& title, const std::string& body);
/// A figure with its caption (caption is HTML).
std::string figure(const std::string& svg_markup, const std::string& caption, const std::string& id = {});
/// A two-column table of (name, value) rows, escaped.
std::string kv_table(const std::vector<std::pair<std::string, std::string>>& rows);

/// The run's groups in page order: model (as listed), concurrency, arm, phase.
std::vector<const CellGroup*> ordered_groups(const RunRecord& run, const std::map<GroupKey, CellGroup>& groups);
/// Model names: the run's models, then any model only cells name.
std::vector<std::string> model_names(const RunRecord& run);

// Sections of the run page (html_*_section.cpp).
std::string header(const RunRecord& run, const std::string& title);
std::string decision_section(const RunRecord& run);
std::string latency_section(const RunRecord& run, const std::vector<const CellGroup*>& groups);
std::string stages_section(const RunRecord& run, const std::vector<const CellGroup*>& groups);
std::string throughput_section(const RunRecord& run, const std::vector<const CellGroup*>& groups,
                               const BootstrapOptions& bootstrap);
/// Every cell's figures and warnings (inside the throughput section).
std::string cells_table(const RunRecord& run);
std::string cache_section(const RunRecord& run);
/// Latency against throughput per arm from the rate sweeps (html_capacity.cpp); "" without sweeps.
std::string capacity_section(const RunRecord& run);
/// Each cell's hit ratio beside its miss-ratio-curve prediction (html_reuse.cpp); "" without reuse.
std::string reuse_section(const RunRecord& run);
std::string utilisation_section(const RunRecord& run);
std::string context_section(const RunRecord& run);
/// A/A twins and spread, host load and contamination per cell, the stopping rule (html_noise.cpp).
std::string noise_section(const RunRecord& run);

}  // namespace refenc::profile::html
