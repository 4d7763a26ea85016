#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "store/disk_tier.hpp"
#include "store/entry_folder.hpp"
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

namespace {
/// A large artifact, so that a write takes long enough to be killed in the middle of it.
Artifact big_artifact(int i) {
  std::vector<std::int64_t> codes(200'000);
  for (std::size_t j = 0; j < codes.size(); ++j)
    codes[j] = static_cast<std::int64_t>((j * 31 + static_cast<std::size_t>(i)) % 1024);
  Artifact a;
  a.tensors["codes"] = HostTensor::from_vector<std::int64_t>({2, 100'000}, codes);
  a.meta["i"] = std::to_string(i);
  return a.compacted();
}
}  // namespace

TEST_CASE("a writer killed with SIGKILL mid-write leaves no readable partial entry; a restarted writer recovers") {
  TempDir dir;
  open_disk_tier({.root = dir.path.string()});
  constexpr int kKeys = 12;
  int killed_mid_write = 0;
  for (int round = 0; round < 8; ++round) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fds[0]);
      auto tier = open_disk_tier({.root = dir.path.string()});
      for (int i = 0;; ++i) {  // writes until killed, one byte on the pipe per finished write
        tier->store(fake_key("big" + std::to_string(i % kKeys)), big_artifact(i % kKeys));
        char c = 1;
        if (::write(fds[1], &c, 1) != 1) ::_exit(1);
      }
    }
    ::close(fds[1]);
    char c;
    for (int n = 0; n < 2 + round; ++n) REQUIRE(::read(fds[0], &c, 1) == 1);
    ::kill(pid, SIGKILL);  // most likely in the middle of the next write
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
    ::close(fds[0]);
    int temp_files = 0;  // the killed write's leftovers, if the kill landed inside one
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path))
      if (e.is_regular_file() && is_temp_name(e.path().filename().string())) ++temp_files;
    killed_mid_write += temp_files;

    auto tier = open_disk_tier({.root = dir.path.string()});  // a restart: cleans the dead writer's temp file
    CHECK(tier->scan().stale_temp_files == 0);
    for (int i = 0; i < kKeys; ++i) {
      auto got = tier->load(fake_key("big" + std::to_string(i)));
      if (got) CHECK(*got == big_artifact(i));
    }
    CHECK(tier->stats().disk_corrupt == 0);
    CHECK(tier->verify(false).corrupt.empty());
  }
  WARN("rounds whose kill left a temporary file (a write cut in the middle): " << killed_mid_write << " of 8");
  // A restarted writer fills every key; every read is right.
  auto tier = open_disk_tier({.root = dir.path.string()});
  for (int i = 0; i < kKeys; ++i) tier->store(fake_key("big" + std::to_string(i)), big_artifact(i));
  for (int i = 0; i < kKeys; ++i) {
    auto got = tier->load(fake_key("big" + std::to_string(i)));
    REQUIRE(got);
    CHECK(*got == big_artifact(i));
  }
}
