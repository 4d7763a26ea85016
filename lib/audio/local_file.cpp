#include "audio/local_file.hpp"

#include "core/error.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace refenc::audio {
namespace {

[[noreturn]] void refuse_file(const std::string& path, const std::string& reason) {
  throw Error(ErrorKind::bad_input, path + ": " + reason);
}

std::string errno_reason(int err) {
  if (err == ENOENT) return "no such file";
  if (err == EACCES) return "permission denied";
  if (err == ENOTDIR) return "a path component is not a directory";
  return std::strerror(err);
}

FileIdentity identity_of(const struct stat& st) {
  FileIdentity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

void check_kind(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) refuse_file(path, "is a directory, not an audio file");
  if (!S_ISREG(st.st_mode)) refuse_file(path, "not a regular file");
}

}  // namespace

std::optional<FileIdentity> identity_of_fd(int fd) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return identity_of(st);
}

std::optional<FileIdentity> identity_of_path(const std::string& path) noexcept {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return identity_of(st);
}

FileIdentity stat_reference_file(const std::string& path) {
  if (path.empty()) refuse_file("(empty path)", "no file name given");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) refuse_file(path, errno_reason(errno));
  check_kind(path, st);
  return identity_of(st);
}

std::string read_reference_file(const std::string& path, std::size_t max_bytes, FileIdentity* identity) {
  if (path.empty()) refuse_file("(empty path)", "no file name given");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) check_kind(path, st);
    refuse_file(path, errno_reason(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse_file(path, errno_reason(errno));
  check_kind(path, st);
  if (identity) *identity = identity_of(st);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) refuse_file(path, "empty file");
  if (size > max_bytes)
    refuse_file(path, "file too large (" + std::to_string(size) + " bytes > " + std::to_string(max_bytes) + " byte limit)");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse_file(path, "read failed: " + errno_reason(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  // A file that grew since fstat is read on, within the limit.
  char more[65536];
  while (got == size) {  // left by a break at end of file
    const ssize_t n = ::read(fd, more, sizeof more);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse_file(path, "read failed: " + errno_reason(errno));
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes)
      refuse_file(path, "file grew past the " + std::to_string(max_bytes) + " byte limit while being read");
    bytes.append(more, static_cast<std::size_t>(n));
  }
  if (bytes.empty()) refuse_file(path, "empty file");
  return bytes;
}

}  // namespace refenc::audio
