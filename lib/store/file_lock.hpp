// FileLock: an exclusive advisory lock (flock) on a lock file, for single-flight across processes.
//
// The kernel releases the lock when its holder exits or dies (SIGKILL included), so a crashed leader
// never blocks the others. Whoever holds the lock may delete the lock file; every acquirer therefore
// checks, after locking, that the path still names the file it locked (same device and inode) and
// starts over when it does not. Releasing deletes the file while still holding the lock, so lock
// files do not accumulate; a file left by a killed holder is deleted by the next holder, or by
// clean_stale_lock() (gc). Locks are per open file, so two lockers in one process exclude each other
// too. For one host only: flock over network file systems is not relied on.
//
//   std::unique_ptr<store::FileLock> lock;
//   if (store::try_lock_file(dir / "abcd.lock", lock) == store::LockResult::acquired) {
//     /* lead */
//   }  // lock.reset() (or its destructor) deletes the file and unlocks
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>

namespace refenc::store {

enum class LockResult { acquired, busy, error };

class FileLock {
 public:
  /// Takes over an open, locked `fd` on `path`.
  FileLock(int fd, std::filesystem::path path) noexcept : fd_(fd), path_(std::move(path)) {}
  /// Deletes the lock file when the path still names the locked file, then unlocks (closes).
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  int fd_;
  std::filesystem::path path_;
};

/// Opens (creating it 0600) `path` and tries to lock it without blocking. `acquired`: `out` holds the
/// lock; `busy`: another open file holds it; `error`: the file could not be opened or locked
/// (errno-style reason dropped: callers treat it as "no lock, go on without").
LockResult try_lock_file(const std::filesystem::path& path, std::unique_ptr<FileLock>& out) noexcept;

/// Like try_lock_file, but waits for the lock while another open file holds it (never `busy`).
LockResult lock_file(const std::filesystem::path& path, std::unique_ptr<FileLock>& out) noexcept;

/// Deletes `path` when no one holds its lock (a leftover of a killed holder). True when deleted.
bool clean_stale_lock(const std::filesystem::path& path) noexcept;

/// True for the names of lock files ("<digest>.lock").
bool is_lock_name(std::string_view file_name) noexcept;

}  // namespace refenc::store
