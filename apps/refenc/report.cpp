// refenc report RUN_DIR --html [OUT]: renders a profile run folder as one self-contained HTML page.
#include <iostream>
#include <memory>

#include "command.hpp"
#include "core/error.hpp"
#include "profile/render/html_report.hpp"

namespace {

struct Options {
  std::string run_dir;
  bool html = false;
  std::string out;
};

int run(const Options& o) {
  if (!o.html) throw refenc::Error(refenc::ErrorKind::bad_input, "report: choose an output format (--html [OUT])");
  std::cout << refenc::profile::write_html_report(o.run_dir, o.out) << '\n';
  return 0;
}

refenc::cli::Registration reg{
    "report", "Render a profile run as a self-contained HTML page",
    [](CLI::App& app) {
      auto o = std::make_shared<Options>();
      app.add_option("run_dir", o->run_dir, "Run folder (or its report.json); requests.jsonl is read when present")
          ->required();
      app.add_flag("--html", o->html, "Write the HTML page");
      app.add_option("out", o->out, "Output file (default RUN_DIR/report.html)");
      app.footer("Prints the path written. The page needs no network: inline CSS and SVG, no script.");
      return [o] { return run(*o); };
    }};

}  // namespace
