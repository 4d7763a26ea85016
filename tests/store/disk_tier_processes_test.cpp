#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "store/disk_tier.hpp"
#include "test_support.hpp"

using namespace refenc;
using namespace refenc::store;
using namespace refenc::store::test;

namespace {

/// Exit status of a writer/reader process: 0 = every read was right and nothing was corrupt.
int hammer(const std::string& root, std::uint64_t max_disk_bytes, int seed) {
  try {
    DiskTierOptions o;
    o.root = root;
    o.max_disk_bytes = max_disk_bytes;
    auto tier = open_disk_tier(o);
    if (!tier->enabled()) return 10;
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([&, t] {
        std::uint32_t x = static_cast<std::uint32_t>(seed * 7 + t + 1);
        for (int i = 0; i < 400; ++i) {
          x = x * 1103515245u + 12345u;
          const std::string text = "shared" + std::to_string((x >> 16) % 16);
          if ((x >> 8) & 1) {
            tier->store(fake_key(text), fake_artifact(text).compacted());
          } else if (auto got = tier->load(fake_key(text)); got && *got != fake_artifact(text).compacted()) {
            ++wrong;
          }
        }
      });
    for (auto& th : threads) th.join();
    // Through a service too: every answer must be the right artifact.
    auto hook = std::make_shared<FakeHook>();
    FakeService service(hook, {}, tier);
    for (int i = 0; i < 16; ++i) {
      const std::string text = "shared" + std::to_string(i);
      if (service.get_or_encode(text) != fake_artifact(text)) ++wrong;
    }
    TierStats s = tier->stats();
    if (wrong) return 1;
    if (s.disk_corrupt) return 2;
    if (s.disk_errors) return 3;
    return 0;
  } catch (...) {
    return 4;
  }
}

void run_processes(std::uint64_t max_disk_bytes) {
  TempDir dir;
  open_disk_tier({.root = dir.path.string()});  // create the root before the race
  std::vector<pid_t> children;
  for (int p = 0; p < 3; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(hammer(dir.path.string(), max_disk_bytes, p));
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto tier = open_disk_tier({.root = dir.path.string()});
  VerifyReport v = tier->verify(false);
  CHECK(v.corrupt.empty());
  CHECK(v.checked > 0);
  CHECK(tier->scan().stale_temp_files == 0);
}

}  // namespace

TEST_CASE("processes writing and reading the same keys at once never see a wrong or partial entry") {
  SECTION("unbounded") { run_processes(2ull << 30); }
  SECTION("with eviction racing the readers") { run_processes(30'000); }
}
