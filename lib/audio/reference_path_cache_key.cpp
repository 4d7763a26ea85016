#include "audio/content_key.hpp"
#include "audio/path_key_memo.hpp"
#include "audio/reference_loader.hpp"
#include "core/error.hpp"
#include "core/sha256.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace refenc::audio {
namespace {

std::string canonical_path(const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
  if (!resolved)
    throw Error(ErrorKind::bad_input, path + ": " + (errno == ENOENT ? "no such file" : std::strerror(errno)));
  return resolved.get();
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

PathKeyMemo& path_key_memo() {
  static PathKeyMemo memo(1024);
  return memo;
}

std::string path_cache_key(PathKeyMemo& memo, const std::string& path, bool trust_stat, std::uint64_t max_bytes) {
  const FileIdentity before = stat_reference_file(path);
  const std::string canonical = canonical_path(path);
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) throw Error(ErrorKind::bad_input, path + ": cannot open: " + std::strerror(errno));
  const std::optional<FileIdentity> opened = identity_of_fd(file.fd);
  if (!opened) throw Error(ErrorKind::bad_input, path + ": cannot stat: " + std::strerror(errno));
  if (max_bytes > 0 && opened->size > max_bytes)
    throw Error(ErrorKind::bad_input, path + ": file too large (" + std::to_string(opened->size) + " bytes > " +
                                          std::to_string(max_bytes) + " byte limit)");

  if (auto entry = memo.find(canonical); entry && entry->identity == *opened) {
    if (trust_stat || sentinel_digest_of_file(file.fd, opened->size) == entry->sentinel) {
      memo.count_hit();
      return entry->digest;
    }
    memo.count_sentinel_mismatch();
  } else {
    memo.count_miss();
  }

  Sha256 hash;
  std::vector<char> buffer(1u << 20);
  std::uint64_t total = 0;
  while (true) {
    const ssize_t n = ::read(file.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorKind::bad_input, path + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    hash.update(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    total += static_cast<std::uint64_t>(n);
    if (max_bytes > 0 && total > max_bytes)
      throw Error(ErrorKind::bad_input, path + ": file grew past the " + std::to_string(max_bytes) + " byte limit");
  }
  std::string digest = hash.hex_digest();
  const std::string sentinel = sentinel_digest_of_file(file.fd, opened->size);
  const std::optional<FileIdentity> after = identity_of_fd(file.fd);
  const bool same_path = identity_of_path(path) == opened;
  if (after && *after == *opened && same_path && total == opened->size && before == *opened) {
    memo.store(canonical, {*opened, digest, sentinel});
  } else {
    memo.count_unstable();
    memo.erase(canonical);
  }
  return digest;
}

void remember_path_key(PathKeyMemo& memo, const std::string& path, const FileIdentity& before,
                       const std::string& digest, const std::string& sentinel) {
  if (identity_of_path(path) != before) {
    memo.count_unstable();
    return;
  }
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
  if (resolved) memo.store(resolved.get(), {before, digest, sentinel});
}

std::optional<PathKeyMemo::Entry> memoised_path_key(PathKeyMemo& memo, const std::string& path) {
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
  if (!resolved) return std::nullopt;
  return memo.find(resolved.get());
}

std::string reference_path_cache_key(const std::string& path, bool trust_stat) {
  return path_cache_key(path_key_memo(), path, trust_stat);
}

}  // namespace refenc::audio
