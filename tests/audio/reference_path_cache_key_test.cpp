#include "audio/content_key.hpp"
#include "audio/path_key_memo.hpp"
#include "audio/reference_loader.hpp"
#include "core/sha256.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <latch>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

namespace {

struct timespec mtime_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mtim;
}

void set_mtime(const std::string& path, struct timespec mtime) {
  const struct timespec times[2] = {{0, UTIME_OMIT}, mtime};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("path keys are whole-file digests, memoised", "[path_key]") {
  TempDir dir;
  PathKeyMemo memo(8);
  const std::string path = dir.file("a.bin");
  write_bytes(path, std::string(50000, 'x'));
  const std::string key = path_cache_key(memo, path, false);
  CHECK(key == sha256_hex(std::string(50000, 'x')));
  CHECK(memo.stats().misses == 1);
  CHECK(path_cache_key(memo, path, false) == key);
  CHECK(path_cache_key(memo, dir.path.string() + "/./a.bin", true) == key);  // canonical path
  CHECK(memo.stats().hits == 2);
  CHECK(memo.size() == 1);
}

TEST_CASE("a file rewritten with the same size and mtime gets its new key", "[path_key]") {
  TempDir dir;
  const std::string path = dir.file("clip.bin");
  std::string content(30000, 'a');
  write_bytes(path, content);
  const auto mtime = mtime_of(path);
  const std::string first = reference_path_cache_key(path);
  content[15000] = 'b';
  write_bytes(path, content);
  set_mtime(path, mtime);
  CHECK(mtime_of(path).tv_nsec == mtime.tv_nsec);
  const std::string second = reference_path_cache_key(path);
  CHECK(second != first);
  CHECK(second == sha256_hex(content));
  CHECK(reference_path_cache_key(path, true) == second);
}

TEST_CASE("on an identity match the sentinel catches changed content unless stat is trusted", "[path_key]") {
  TempDir dir;
  PathKeyMemo memo;
  const std::string path = dir.file("clip.bin");
  write_bytes(path, std::string(40000, 'z'));
  // A stale entry whose identity still matches (as after a rewrite within one timestamp tick).
  const FileIdentity id = stat_reference_file(path);
  memo.store(std::filesystem::canonical(path).string(), {id, std::string(64, '0'), sentinel_digest("old")});
  CHECK(path_cache_key(memo, path, /*trust_stat=*/true) == std::string(64, '0'));
  CHECK(path_cache_key(memo, path, /*trust_stat=*/false) == sha256_hex(std::string(40000, 'z')));
  CHECK(memo.stats().sentinel_mismatches == 1);
  CHECK(path_cache_key(memo, path, true) == sha256_hex(std::string(40000, 'z')));  // memo repaired
}

TEST_CASE("the memo is bounded, least recently used first out", "[path_key]") {
  TempDir dir;
  PathKeyMemo memo(4);
  for (int i = 0; i < 6; ++i) {
    write_bytes(dir.file("f" + std::to_string(i)), std::string(100 + i, 'q'));
    path_cache_key(memo, dir.file("f" + std::to_string(i)), false);
  }
  CHECK(memo.size() == 4);
  CHECK_FALSE(memoised_path_key(memo, dir.file("f0")));
  CHECK(memoised_path_key(memo, dir.file("f5")));
  CHECK(path_key_memo().capacity() == 1024);
}

TEST_CASE("concurrent keying of the same files is consistent", "[path_key]") {
  TempDir dir;
  PathKeyMemo memo(16);
  for (int i = 0; i < 4; ++i) write_bytes(dir.file("c" + std::to_string(i)), std::string(200000 + i, char('a' + i)));
  constexpr int threads = 8;
  std::latch start(threads);
  std::vector<std::vector<std::string>> keys(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int round = 0; round < 20; ++round)
        for (int i = 0; i < 4; ++i) keys[t].push_back(path_cache_key(memo, dir.file("c" + std::to_string(i)), false));
    });
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t)
    for (std::size_t k = 0; k < keys[t].size(); ++k)
      CHECK(keys[t][k] == sha256_hex(std::string(200000 + k % 4, char('a' + k % 4))));
  CHECK(memo.size() == 4);
}

TEST_CASE("still_current follows the file", "[path_key]") {
  TempDir dir;
  const std::string path = dir.file("ref.wav");
  REQUIRE(write_audio(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, 8000));
  const LoadedReference ref = load_reference(ReferenceSource::from_path(path), {});
  CHECK(still_current(ref));
  std::string bytes = read_bytes(path);
  const auto mtime = mtime_of(path);
  bytes[bytes.size() - 10] ^= 0x40;
  write_bytes(path, bytes);
  set_mtime(path, mtime);
  CHECK_FALSE(still_current(ref));
  std::filesystem::remove(path);
  CHECK_FALSE(still_current(ref));
  const LoadedReference from_bytes = load_reference(ReferenceSource::from_bytes(bytes), {});
  CHECK(still_current(from_bytes));
}
