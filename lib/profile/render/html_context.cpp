// The run page's header and its context section (host, library, stages, models, manifest).
#include <sstream>

#include <fmt/format.h>

#include "profile/record/record_json.hpp"
#include "profile/render/html_page.hpp"

namespace refenc::profile::html {

std::string header(const RunRecord& run, const std::string& title) {
  const RunContext& ctx = run.context;
  std::ostringstream os;
  os << "<header><h1>" << e(title) << "</h1>\n<p class=\"sub\">Run started " << e(ctx.started_utc) << " on "
     << e(ctx.host) << " (" << e(ctx.cpu_model) << ", " << ctx.cores << " cores), git " << e(ctx.git_revision)
     << "; status <b data-key=\"status\">" << e(run.status) << "</b>; " << run.cells.size() << " cells in "
     << fixed(run.wall_s, 1) << " s.</p>\n";
  os << "<p class=\"note\">Preprocessing and reference encode are <b>measured</b>; synthesis is <b>modelled</b> (a "
        "continuous-batching engine simulated from the manifest's parameters); TTFA and E2E add both.</p>\n";
  os << "<nav><a href=\"#decision\">Decision</a><a href=\"#latency\">Latency</a><a href=\"#stages\">Stages</a>"
        "<a href=\"#throughput\">Throughput</a><a href=\"#cache\">Cache</a><a href=\"#utilisation\">Utilisation</a>"
        "<a href=\"#context\">Context</a></nav></header>\n";
  return os.str();
}

std::string context_section(const RunRecord& run) {
  std::ostringstream os;
  os << "<section id=\"context\"><h2>Run context</h2>\n";
  std::vector<std::pair<std::string, std::string>> rows = context_rows(run.context);
  rows.emplace_back("status", run.status);
  rows.emplace_back("wall time (s)", fixed(run.wall_s, 1));
  rows.emplace_back("percentile method", percentile_method());
  os << kv_table(rows);
  os << "<h3>Stages: measured or modelled</h3>\n";
  std::vector<std::pair<std::string, std::string>> kinds;
  for (Stage s : reported_stages()) kinds.emplace_back(to_string(s), stage_kind(s));
  os << kv_table(kinds);
  os << "<h3>Models</h3>\n<table><thead><tr><th>model</th><th>evidence grade</th><th>scale</th><th>real "
        "weights</th><th>rates</th><th>batching</th><th>eligible for M4b</th><th>encoder</th><th>synthesis "
        "source</th></tr></thead><tbody>\n";
  for (const ModelEntry& m : run.models) {
    os << "<tr><td>" << e(m.name) << "</td><td>" << e(m.evidence_grade) << "</td><td>" << e(m.scale) << "</td><td>"
       << (m.real_weights ? "yes" : "no") << "</td><td>" << m.sample_rate << " Hz, " << fmt::format("{}", m.frame_rate)
       << " frames/s</td><td>" << (m.can_encode_batch ? "batch primitive" : "no batch primitive")
       << (m.has_internal_batching ? ", batches internally" : "") << "</td><td>"
       << (m.eligibility.eligible ? "yes" : "no") << ": " << e(m.eligibility.reason) << "</td><td>"
       << e(encoder_text(m.encoder)) << "</td><td>" << e(m.synthesis.source) << "</td></tr>\n";
  }
  os << "</tbody></table>\n";
  const ManifestSummary& man = run.manifest;
  os << "<h3>Manifest</h3>\n";
  std::vector<std::pair<std::string, std::string>> mrows{
      {"name", man.name}, {"path", man.path}, {"sha256", man.sha256}, {"seed", std::to_string(man.seed)}};
  for (auto& row : gate_spec_rows(man.gate)) mrows.push_back(std::move(row));
  os << kv_table(mrows);
  if (!man.content.is_null())
    os << "<details><summary>Full manifest</summary><pre>" << e(manifest_text(man)) << "</pre></details>\n";
  os << "</section>\n";
  return os.str();
}

}  // namespace refenc::profile::html
