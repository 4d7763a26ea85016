#include "profile/render/html_report.hpp"

#include <filesystem>

#include "profile/record/cell_groups.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/html_page.hpp"
#include "util/atomic_file.hpp"

namespace refenc::profile {

std::string render_html_report(const RunRecord& run, const HtmlReportOptions& options) {
  using namespace html;
  auto groups = group_cells(run);
  std::vector<const CellGroup*> ordered = ordered_groups(run, groups);
  GateOptions gate = run.gate ? run.gate->options : run.gate_options();
  BootstrapOptions bootstrap{options.resamples > 0 ? options.resamples : gate.spec.bootstrap_resamples,
                             options.seed.value_or(gate.seed),
                             options.confidence > 0 ? options.confidence : gate.spec.confidence};
  std::string title = options.title.empty()
                          ? "refenc profile: " + (run.manifest.name.empty() ? "run" : run.manifest.name)
                          : options.title;
  std::string body = header(run, title) + decision_section(run) + latency_section(run, ordered) +
                     stages_section(run, ordered) + throughput_section(run, ordered, bootstrap) +
                     capacity_section(run) + cache_section(run) + reuse_section(run) + utilisation_section(run) +
                     noise_section(run) + context_section(run) +
                     "<footer>Written by refenc from report.json (schema refenc-profile-report v" +
                     std::to_string(run.schema_version) +
                     "). Self-contained: no script, no network. Colours: Okabe-Ito palette.</footer>\n";
  return page(title, body);
}

std::string write_html_report(const std::string& run_dir, const std::string& out, const HtmlReportOptions& options) {
  RunRecord run = load_run(run_dir);
  std::string target = out.empty() ? (std::filesystem::path(run.dir) / "report.html").string() : out;
  write_file_atomic(target, render_html_report(run, options));
  return target;
}

}  // namespace refenc::profile
