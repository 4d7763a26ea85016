// refenc: reference-audio encoding for voice-cloning TTS, its cache, and the M4b batching profiler.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>

#include "command.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace refenc::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
}  // namespace refenc::cli

int main(int argc, char** argv) {
  using namespace refenc;
  CLI::App app{"refenc: encode, cache and profile reference audio for voice-cloning TTS"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "refenc 0.1.0");
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug detail to stderr");
  app.add_flag("-q,--quiet", quiet, "Log errors only");

  auto& cmds = cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::function<int()> run;
  for (auto& c : cmds) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    auto fn = c.setup(*sub);
    sub->callback([&run, fn] { run = fn; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (verbose) log::set_level(log::Level::debug);
  if (quiet) log::set_level(log::Level::error);
  try {
    return run ? run() : 0;
  } catch (const Error& e) {
    std::cerr << "refenc: error: " << e.what() << '\n';
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "refenc: error: " << e.what() << '\n';
    return 1;
  }
}
