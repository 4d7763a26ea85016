// refenc profile MANIFEST: runs a workload, writes the run folder, prints the table and the gate.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "encoder_backend.hpp"
#include "profile/render/html_report.hpp"
#include "profile/render/text_report.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/profiler.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);  // a second Ctrl-C ends the process at once
}

struct ProfileCommandOptions {
  std::string manifest;
  std::string out;
  bool no_progress = false;
};

std::string default_out(const std::string& name) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return std::string("runs/") + buf + "-" + name;
}

int run_profile_command(const ProfileCommandOptions& o) {
  using namespace refenc::profile;
  Manifest m = load_manifest(o.manifest);
  validate_encoder_models(m);  // unknown models or scales fail now, not after earlier models' cells
  validate_shared_cache(m);
  std::string out = o.out.empty() ? default_out(m.name) : o.out;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  ProfileOptions po;
  po.out_dir = out;
  po.stop = &g_stop;
  po.progress = !o.no_progress;
  po.library_context = torch_library_context;
  po.host_probe = read_proc_snapshot;
  ProfileResult r = run_profile(m, encoder_backend_factory(), po);
  std::cout << summary_table(r.run) << '\n';
  for (const SkippedArm& s : r.run.skipped)
    std::cout << "skipped " << s.model << " " << to_string(s.arm) << ": " << s.reason << '\n';
  std::cout << format_gate(*r.run.gate);
  // The page is a view of report.json: its failure is a warning and never changes the gate's exit code.
  try {
    std::cout << "html report: " << write_html_report(r.dir) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "refenc: warning: html report: " << e.what() << '\n';
  }
  std::cout << "run folder: " << r.dir << '\n';
  if (r.interrupted) {
    std::cerr << "refenc: interrupted: partial report written to " << r.dir << '\n';
    return 130;
  }
  return r.run.gate->exit_code;
}

refenc::cli::Registration profile_command{
    "profile", "Run a workload manifest: per-cell latency, throughput, cache counters, then the M4b gate",
    [](CLI::App& app) {
      auto o = std::make_shared<ProfileCommandOptions>();
      app.add_option("manifest", o->manifest, "Workload manifest (JSON), e.g. workloads/nightly.json")->required();
      app.add_option("--out", o->out, "Run folder to write (default runs/<UTC time>-<manifest name>)");
      app.add_flag("--no-progress", o->no_progress, "No progress line on stderr");
      app.footer(
          "Exit codes: 0 every model GO or NOT_APPLICABLE; 10 some NO-GO; 11 some INCONCLUSIVE; "
          "12 some MISSING_ARM; 130 interrupted (partial report written); 2-7 harness errors.");
      return [o] { return run_profile_command(*o); };
    }};

}  // namespace
