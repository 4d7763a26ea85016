#include "store/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace refenc::store {
namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

/// True while `path` names the file open as `fd`.
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 && same_file(held, named);
}

LockResult acquire(const std::filesystem::path& path, std::unique_ptr<FileLock>& out, bool block) noexcept {
  out.reset();
  try {
    // A holder may delete the file between our open and our lock; then we hold a lock on a file
    // nobody else can find, and start over on the new one. A few rounds always suffice in practice.
    for (int attempt = 0; attempt < 16; ++attempt) {
      int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) return LockResult::error;
      int rc;
      do rc = ::flock(fd, block ? LOCK_EX : LOCK_EX | LOCK_NB);
      while (rc != 0 && errno == EINTR);
      if (rc != 0) {
        const int e = errno;
        ::close(fd);
        return e == EWOULDBLOCK ? LockResult::busy : LockResult::error;
      }
      if (still_named(fd, path)) {
        out = std::make_unique<FileLock>(fd, path);
        return LockResult::acquired;
      }
      ::close(fd);
    }
    return LockResult::busy;
  } catch (...) {
    return LockResult::error;
  }
}

}  // namespace

FileLock::~FileLock() {
  if (fd_ < 0) return;
  if (still_named(fd_, path_)) ::unlink(path_.c_str());  // while locked: no one else can be using it
  ::close(fd_);
}

LockResult try_lock_file(const std::filesystem::path& path, std::unique_ptr<FileLock>& out) noexcept {
  return acquire(path, out, false);
}

LockResult lock_file(const std::filesystem::path& path, std::unique_ptr<FileLock>& out) noexcept {
  return acquire(path, out, true);
}

bool clean_stale_lock(const std::filesystem::path& path) noexcept {
  std::unique_ptr<FileLock> lock;
  if (try_lock_file(path, lock) != LockResult::acquired) return false;
  lock.reset();  // deletes the file while holding its lock
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0;
}

bool is_lock_name(std::string_view name) noexcept { return name.size() > 5 && name.ends_with(".lock"); }

}  // namespace refenc::store
