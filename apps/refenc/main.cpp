// refenc: reference-audio encoding for voice-cloning TTS, its cache, and the M4b batching profiler.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include <unistd.h>

#include "command.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "encoders/cpu_tensor_memory.hpp"

namespace refenc::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}

namespace {
/// LibTorch's CPU buffers come from a block cache of REFENC_TENSOR_CACHE_MB MiB (0 keeps none; default
/// 4096, or a quarter of the machine's memory when that is less): an encode then reuses its buffers
/// instead of faulting fresh pages in on every call. The bound covers buffers freed and not yet reused;
/// at concurrency 16 with batches of 8, Fish's tiny proxy needed more than 1 GiB of them.
void cache_tensor_blocks() {
  const auto pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  std::size_t mib = 4096;
  if (pages > 0 && page > 0) mib = std::min<std::size_t>(mib, static_cast<std::size_t>(pages) / 4 * page >> 20);
  if (const char* text = std::getenv("REFENC_TENSOR_CACHE_MB")) {
    const std::string s = text;
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || s[0] == '-' || v > (1ull << 24))
      throw Error(ErrorKind::config, "REFENC_TENSOR_CACHE_MB '" + s + "': expected whole MiB from 0 to 16777216");
    mib = static_cast<std::size_t>(v);
  }
  encoders::cache_cpu_tensor_blocks(mib << 20);
}
}  // namespace
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
    cli::cache_tensor_blocks();
    return run ? run() : 0;
  } catch (const Error& e) {
    std::cerr << "refenc: error: " << e.what() << '\n';
    return exit_code(e.kind());
  } catch (const std::exception& e) {
    std::cerr << "refenc: error: " << e.what() << '\n';
    return 1;
  }
}
