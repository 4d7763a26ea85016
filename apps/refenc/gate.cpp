// refenc gate REPORT: re-evaluates the M4b gate from a run folder's report and raw requests.
#include <iostream>
#include <memory>

#include "command.hpp"
#include "core/error.hpp"
#include "profile/record/record_json.hpp"
#include "profile/record/run_folder.hpp"
#include "profile/render/text_report.hpp"
#include "profile/verdict/gate.hpp"

namespace {

struct GateCommandOptions {
  std::string report;
  std::string schema;
  bool json = false;
};

int run_gate(const GateCommandOptions& o) {
  using namespace refenc::profile;
  std::vector<std::string> errors;
  try {
    errors = validate_report_file(o.report, o.schema);
  } catch (const refenc::Error& e) {
    if (!o.schema.empty() || e.kind() != refenc::ErrorKind::io) throw;
    std::cerr << "refenc: warning: report not validated: " << e.what() << '\n';
  }
  if (!errors.empty())
    throw refenc::Error(refenc::ErrorKind::bad_input,
                        o.report + ": report does not match its schema: " + errors[0] +
                            (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : ""));
  RunRecord run = load_run_with_requests(o.report);
  GateReport g = evaluate_gate(run, run.gate_options());
  if (o.json)
    std::cout << to_json(g).dump(2) << '\n';
  else
    std::cout << format_gate(g);
  if (run.status == "interrupted")
    std::cerr << "refenc: warning: " << o.report << " is a partial (interrupted) report\n";
  return g.exit_code;
}

refenc::cli::Registration gate_command{
    "gate", "Apply the M4b go/no-go rule to a profile report (run folder or report.json)", [](CLI::App& app) {
      auto o = std::make_shared<GateCommandOptions>();
      app.add_option("report", o->report, "Run folder or its report.json (requests.jsonl beside it)")->required();
      app.add_option("--schema", o->schema, "Report schema (default: reports/report.schema.json of the source tree)");
      app.add_flag("--json", o->json, "Print the gate as JSON");
      app.footer(
          "Exit codes: 0 every model GO or NOT_APPLICABLE; 10 some NO-GO; 11 some INCONCLUSIVE; "
          "12 some MISSING_ARM; 2-7 harness errors (bad report, I/O).");
      return [o] { return run_gate(*o); };
    }};

}  // namespace
