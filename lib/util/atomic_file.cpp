#include "util/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace refenc {

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::io, tmp + ": cannot create file");
    out << content;
    out.flush();
    if (!out) throw Error(ErrorKind::io, tmp + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ErrorKind::io, path + ": cannot rename into place: " + ec.message());
  }
}

}  // namespace refenc
