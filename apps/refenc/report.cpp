// refenc report RUN_DIR --html [OUT] | --trace FILE: renders a profile run folder as one self-contained
// HTML page, or writes its request timelines as a Chrome trace-event file (Perfetto, chrome://tracing).
#include <iostream>
#include <memory>

#include "command.hpp"
#include "core/error.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/trace_events.hpp"

namespace {

struct ReportCommandOptions {
  std::string run_dir;
  bool html = false;
  std::string out;
  std::string trace;
};

int run_report(const ReportCommandOptions& o) {
  if (!o.html && o.trace.empty())
    throw refenc::Error(refenc::ErrorKind::bad_input, "report: choose an output (--html [OUT], --trace FILE)");
  if (o.html) std::cout << refenc::profile::write_html_report(o.run_dir, o.out) << '\n';
  if (!o.trace.empty()) std::cout << refenc::profile::write_trace_events(o.run_dir, o.trace) << '\n';
  return 0;
}

refenc::cli::Registration report_command{
    "report", "Render a profile run as a self-contained HTML page or a trace-event timeline", [](CLI::App& app) {
      auto o = std::make_shared<ReportCommandOptions>();
      app.add_option("run_dir", o->run_dir, "Run folder (or its report.json); requests.jsonl is read when present")
          ->required();
      app.add_flag("--html", o->html, "Write the HTML page");
      app.add_option("out", o->out, "Output file of --html (default RUN_DIR/report.html)");
      app.add_option("--trace", o->trace,
                     "Write per-request timelines (queue, preprocessing, encode, modelled synthesis; one track "
                     "per worker) as a Chrome trace-event JSON file; needs requests.jsonl");
      app.footer(
          "Prints the paths written. The page needs no network: inline CSS and SVG, no script. The trace "
          "loads in ui.perfetto.dev or chrome://tracing.");
      return [o] { return run_report(*o); };
    }};

}  // namespace
