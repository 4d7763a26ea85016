// Writing a whole file so that a reader sees either the old content or the new, never a part: the
// bytes go to a temporary file in the same folder, which is then renamed over the target.
//
//   refenc::write_file_atomic("runs/x/report.json", text);   // throws Error(io) naming the path
#pragma once

#include <string>

namespace refenc {

/// Writes `content` to `path` through a temp file beside it and a rename; throws Error(io) on failure
/// (the temp file is removed).
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace refenc
