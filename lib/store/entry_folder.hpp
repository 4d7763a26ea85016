// EntryFolder: the file mechanics shared by the disk tier and the voice cache, under one folder.
//
// It prepares its folder (created 0700, must be a folder owned by this user and writable), writes
// entry files atomically (a uniquely named temporary file in the same folder, fsync, rename; files
// 0600), reads them with a size bound, walks them, and cleans temporary files left by dead or stalled
// writers. When the folder is unusable (missing and cannot be created, read-only, full, not ours) it
// disables itself with one warning; callers then go on without it. Nothing here throws.
//
//   store::EntryFolder folder(root, "v1", "disk cache");
//   if (folder.enabled()) folder.write("fish/ab/abcd.pt", bytes);
//   store::FileRead r = folder.read("fish/ab/abcd.pt", 64 << 20, /*touch=*/true);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace refenc::store {

/// The default cache root: $REFENC_CACHE_DIR, else $XDG_CACHE_HOME/refenc, else ~/.cache/refenc
/// (empty variables are ignored; without HOME, the passwd entry's home).
std::string default_cache_root();

/// `text` as one safe path component: characters outside [A-Za-z0-9._-] become '_', a leading '.'
/// becomes '_', and when anything changed (or it was longer than 64 bytes) a short hash of the
/// original is appended so distinct names stay distinct. Never empty, never "." or "..".
std::string sanitize_component(std::string_view text);

/// True for the names of the temporary files EntryFolder writes.
bool is_temp_name(std::string_view file_name) noexcept;

/// Identity of an open file, to delete it only if the path still names that same file.
struct FileId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
};

enum class ReadStatus { ok, absent, too_large, io_error };

struct FileRead {
  ReadStatus status = ReadStatus::absent;
  std::vector<char> bytes;
  FileId id;
  std::uint64_t size = 0;
  int error = 0;  ///< errno for io_error.
};

struct FileWrite {
  bool ok = false;
  int error = 0;                     ///< errno when !ok.
  std::uint64_t replaced_bytes = 0;  ///< Size of the file the write replaced (0 when none).
};

/// One entry file found by walk().
struct EntryFile {
  std::filesystem::path path;  ///< Absolute path.
  std::filesystem::path rel;   ///< Relative to the folder.
  std::uint64_t size = 0;
  std::timespec mtime{};
};

class EntryFolder {
 public:
  /// Prepares `root / sub` (missing folders created 0700). `root` and every folder below it must be
  /// folders owned by this user. `label` names the folder in the one warning.
  EntryFolder(const std::filesystem::path& root, const std::filesystem::path& sub, std::string label);

  bool enabled() const noexcept;
  const std::filesystem::path& dir() const noexcept { return dir_; }
  /// Why the folder is disabled (empty while enabled).
  std::string disabled_reason() const;
  /// Disables the folder and logs one warning (only the first call warns).
  void disable(const std::string& reason) noexcept;

  /// Creates the missing folders above `rel` (0700). False when one could not be created.
  bool make_parents(const std::filesystem::path& rel) const noexcept;
  /// Writes `bytes` to `rel` atomically. A full, read-only or foreign file system disables the folder.
  FileWrite write(const std::filesystem::path& rel, std::span<const char> bytes) noexcept;
  /// Reads `rel` when it is at most `max_bytes` (checked before reading); `touch` sets its mtime to now.
  FileRead read(const std::filesystem::path& rel, std::uint64_t max_bytes, bool touch) const noexcept;
  /// Deletes `rel` if it is still the file `id` (another writer may have replaced it). Returns true if deleted.
  bool remove_if_same(const std::filesystem::path& rel, const FileId& id) const noexcept;
  /// Deletes `rel`; returns its size, or 0 when it was absent or could not be deleted.
  std::uint64_t remove(const std::filesystem::path& rel) const noexcept;

  /// Calls `fn` for every entry file (`*.pt`; with `extension`, files ending in it instead) under `sub`
  /// (relative; empty = everything). Temporary files older than `stale_age`, or written by a process
  /// that no longer exists on this host, are deleted on the way; their count is returned.
  std::size_t walk(const std::filesystem::path& sub, const std::function<void(const EntryFile&)>& fn,
                   std::chrono::seconds stale_age = std::chrono::seconds(600),
                   std::string_view extension = ".pt") const noexcept;

 private:
  std::filesystem::path dir_;
  std::string label_;
  mutable std::mutex mutex_;  // guards reason_
  std::string reason_;
  std::atomic<bool> enabled_{false};
  std::atomic<bool> warned_{false};
};

}  // namespace refenc::store
