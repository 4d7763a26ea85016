// The CLI's subcommand registry: each subcommand lives in its own file and registers itself.
//
//   // apps/refenc/models.cpp
//   refenc::cli::Registration models_command{"models", "List the encoders", [](CLI::App& app) {
//     auto opts = std::make_shared<ModelsOptions>();
//     app.add_flag("--json", opts->json, "Print JSON");
//     return [opts] { return run_models(*opts); };   // returns the process exit code
//   }};
//
// The CLI compiles in unity batches, so each file's names (options struct, run function, registration)
// are its own: `ModelsOptions`, `run_models`, `models_command`.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace refenc::cli {

/// Builds a subcommand's options on `app` and returns the function that runs it (its exit code).
using Setup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  std::string name;
  std::string description;
  Setup setup;
};

std::vector<Command>& commands();

struct Registration {
  Registration(std::string name, std::string description, Setup setup) {
    commands().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

/// The network scale a command builds: `scale` when given, else "full" with a checkpoint (the published
/// dimensions) and "tiny" for a seeded proxy.
inline std::string network_scale(const std::string& scale, const std::string& checkpoint) {
  return !scale.empty() ? scale : checkpoint.empty() ? "tiny" : "full";
}

/// Help text of every command's --checkpoint option.
inline constexpr const char* kCheckpointHelp =
    "Published checkpoint (file or downloaded model folder) loaded into the real network (docs/encoders.md)";
inline constexpr const char* kScaleHelp = "Network size: full, small or tiny (default tiny; full with --checkpoint)";

}  // namespace refenc::cli
