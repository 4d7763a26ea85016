// Local reference files: checked stat (missing, directory, special file, empty, too large) and a
// bounded read that never trusts the size it was told.
//
//   audio::FileIdentity id = audio::stat_reference_file("clip.flac");   // throws Error(bad_input)
//   std::string bytes = audio::read_reference_file("clip.flac", 64u << 20);
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace refenc::audio {

/// What identifies one version of a file for the path-key memo.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};

/// Identity of an open file / of a path (following links); nullopt when stat fails.
std::optional<FileIdentity> identity_of_fd(int fd) noexcept;
std::optional<FileIdentity> identity_of_path(const std::string& path) noexcept;

/// stat()s a reference path (following links). Throws Error(bad_input, "<path>: <reason>") when it is
/// missing, unreadable, a directory or not a regular file.
FileIdentity stat_reference_file(const std::string& path);

/// Reads a whole regular file, refusing it before reading when it is empty or larger than
/// `max_bytes`, and refusing it if it grows past `max_bytes` while being read. `identity`, when
/// given, receives the stat taken before reading.
std::string read_reference_file(const std::string& path, std::size_t max_bytes, FileIdentity* identity = nullptr);

}  // namespace refenc::audio
