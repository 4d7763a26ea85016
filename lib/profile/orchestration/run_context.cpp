#include "profile/orchestration/run_context.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

#include "util/source_dir.hpp"

namespace refenc::profile {
namespace {

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "unknown";
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

RunContext make_context(const Manifest& manifest) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string rev = command_output(std::string("git -C '") + refenc::source_dir() + "' rev-parse HEAD 2>/dev/null");
  if (rev.empty())
    rev = "unknown (no git revision)";
  else if (!command_output(std::string("git -C '") + refenc::source_dir() + "' status --porcelain -uno 2>/dev/null")
                .empty())
    rev += "-dirty";
  RunContext c;
  c.host = host;
  c.cpu_model = cpu_model();
  c.cores = std::thread::hardware_concurrency();
  c.git_revision = rev;
  c.manifest_path = manifest.path;
  c.manifest_sha256 = manifest.sha256;
  c.seed = manifest.seed;
  c.started_utc = utc_now();
  return c;
}

}  // namespace refenc::profile
