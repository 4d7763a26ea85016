#include "store/entry_folder.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include "core/log.hpp"
#include "core/sha256.hpp"

namespace fs = std::filesystem;

namespace refenc::store {
namespace {

constexpr std::string_view kTempPrefix = ".tmp-";

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

bool disables_folder(int e) { return e == ENOSPC || e == EDQUOT || e == EROFS || e == EACCES || e == EPERM; }

/// Creates `dir` if missing (0700) and checks it is a folder owned by this user; "" or the reason.
std::string ensure_own_folder(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return dir.string() + ": " + errno_text(errno);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return dir.string() + ": " + errno_text(errno);
  if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a folder";
  if (st.st_uid != ::geteuid())
    return dir.string() + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  return {};
}

/// Creates the missing folders of `dir` (0700) without checking ownership above `stop`.
std::string make_folders(const fs::path& dir) {
  fs::path p;
  for (const fs::path& part : dir) {
    p /= part;
    if (::mkdir(p.c_str(), 0700) == 0 || errno == EEXIST) continue;
    return p.string() + ": " + errno_text(errno);
  }
  return {};
}

std::atomic<std::uint64_t> temp_counter{0};

std::string temp_name(const fs::path& final_path) {
  return std::string(kTempPrefix) + std::to_string(::getpid()) + "-" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffffu) + "-" +
         std::to_string(temp_counter.fetch_add(1)) + "-" + final_path.filename().string();
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

std::string default_cache_root() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  if (std::string d = env("REFENC_CACHE_DIR"); !d.empty()) return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty() && d.front() == '/') return d + "/refenc";
  std::string home = env("HOME");
  if (home.empty()) {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw && pw->pw_dir) home = pw->pw_dir;
  }
  if (home.empty()) return "/tmp/refenc-cache-" + std::to_string(::geteuid());
  return home + "/.cache/refenc";
}

std::string sanitize_component(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (!out.empty() && out.front() == '.') out.front() = '_';
  if (out != text || out.size() > 64 || out.empty()) {
    if (out.size() > 48) out.resize(48);
    out += (out.empty() ? "" : "-") + sha256_hex(text).substr(0, 8);
  }
  return out;
}

bool is_temp_name(std::string_view name) noexcept { return name.starts_with(kTempPrefix); }

EntryFolder::EntryFolder(const fs::path& root, const fs::path& sub, std::string label) : label_(std::move(label)) {
  std::string why;
  if (root.empty()) {
    why = "no cache folder given";
  } else {
    std::error_code ec;
    fs::path abs_root = fs::absolute(root, ec);
    if (ec) abs_root = root;
    dir_ = abs_root / sub;
    why = make_folders(abs_root.parent_path());
    if (why.empty()) why = ensure_own_folder(abs_root);
    fs::path p = abs_root;
    for (const fs::path& part : sub) {
      if (!why.empty()) break;
      p /= part;
      why = ensure_own_folder(p);
    }
    if (why.empty()) {
      // A probe write: a read-only mount or a folder we may not write to shows up here, at open.
      fs::path probe = dir_ / temp_name(dir_ / "probe");
      int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) {
        why = dir_.string() + " is not writable: " + errno_text(errno);
      } else {
        ::close(fd);
        ::unlink(probe.c_str());
      }
    }
  }
  if (dir_.empty()) dir_ = root / sub;
  if (why.empty())
    enabled_ = true;
  else
    disable(why);
}

bool EntryFolder::enabled() const noexcept { return enabled_.load(std::memory_order_acquire); }

std::string EntryFolder::disabled_reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

void EntryFolder::disable(const std::string& reason) noexcept {
  try {
    {
      std::lock_guard lock(mutex_);
      if (reason_.empty()) reason_ = reason;
    }
    enabled_.store(false, std::memory_order_release);
    if (!warned_.exchange(true)) log::warn(label_ + " disabled, continuing without it: " + reason);
  } catch (...) {
    enabled_.store(false, std::memory_order_release);
  }
}

bool EntryFolder::make_parents(const fs::path& rel) const noexcept {
  try {
    fs::path p = dir_;
    for (const fs::path& part : rel.parent_path()) {
      p /= part;
      if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) return false;
    }
    return true;
  } catch (...) {
    errno = ENOMEM;
    return false;
  }
}

FileWrite EntryFolder::write(const fs::path& rel, std::span<const char> bytes) noexcept {
  FileWrite out;
  if (!enabled()) return out;
  try {
    const fs::path final_path = dir_ / rel;
    const fs::path parent = final_path.parent_path();
    std::string why;
    if (!make_parents(rel)) {
      out.error = errno;
      why = parent.string() + ": " + errno_text(out.error);
    } else {
      const fs::path temp = parent / temp_name(final_path);
      int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) {
        out.error = errno;
        why = temp.string() + ": " + errno_text(errno);
      } else {
        bool ok = write_all(fd, bytes.data(), bytes.size()) && ::fsync(fd) == 0;
        int e = errno;
        if (::close(fd) != 0 && ok) {
          ok = false;
          e = errno;
        }
        struct stat old {};
        if (ok && ::lstat(final_path.c_str(), &old) == 0 && S_ISREG(old.st_mode))
          out.replaced_bytes = static_cast<std::uint64_t>(old.st_size);
        if (ok && ::rename(temp.c_str(), final_path.c_str()) != 0) {
          ok = false;
          e = errno;
        }
        if (!ok) {
          ::unlink(temp.c_str());
          out.error = e;
          why = final_path.string() + ": " + errno_text(e);
        } else {
          out.ok = true;
        }
      }
    }
    if (!out.ok) {
      if (disables_folder(out.error))
        disable(why);
      else if (log::level() <= log::Level::debug)
        log::debug(label_ + ": write failed: " + why);
    }
  } catch (...) {
    out.ok = false;
    if (!out.error) out.error = EIO;
  }
  return out;
}

FileRead EntryFolder::read(const fs::path& rel, std::uint64_t max_bytes, bool touch) const noexcept {
  FileRead out;
  if (!enabled()) return out;
  try {
    const fs::path path = dir_ / rel;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return out;
      out.status = ReadStatus::io_error;
      out.error = errno;
      return out;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      out.status = ReadStatus::io_error;
      out.error = S_ISDIR(st.st_mode) ? EISDIR : errno;
      ::close(fd);
      return out;
    }
    out.id = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
    out.size = static_cast<std::uint64_t>(st.st_size);
    if (out.size > max_bytes) {
      out.status = ReadStatus::too_large;
      ::close(fd);
      return out;
    }
    out.bytes.resize(out.size);
    std::size_t got = 0;
    while (got < out.bytes.size()) {
      ssize_t r = ::read(fd, out.bytes.data() + got, out.bytes.size() - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        out.status = ReadStatus::io_error;
        out.error = errno;
        ::close(fd);
        return out;
      }
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.bytes.resize(got);
    if (touch) ::futimens(fd, nullptr);
    ::close(fd);
    out.status = ReadStatus::ok;
  } catch (...) {
    out.status = ReadStatus::io_error;
    out.error = ENOMEM;
  }
  return out;
}

bool EntryFolder::remove_if_same(const fs::path& rel, const FileId& id) const noexcept {
  try {
    const fs::path path = dir_ / rel;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return false;
    if (static_cast<std::uint64_t>(st.st_dev) != id.dev || static_cast<std::uint64_t>(st.st_ino) != id.ino)
      return false;
    return ::unlink(path.c_str()) == 0;
  } catch (...) {
    return false;
  }
}

std::uint64_t EntryFolder::remove(const fs::path& rel) const noexcept {
  try {
    const fs::path path = dir_ / rel;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return 0;
    if (::unlink(path.c_str()) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_size);
  } catch (...) {
    return 0;
  }
}

std::size_t EntryFolder::walk(const fs::path& sub, const std::function<void(const EntryFile&)>& fn,
                              std::chrono::seconds stale_age, std::string_view extension) const noexcept {
  std::size_t stale = 0;
  try {
    const fs::path start = sub.empty() ? dir_ : dir_ / sub;
    std::error_code ec;
    fs::recursive_directory_iterator it(start, fs::directory_options::skip_permission_denied, ec), end;
    const std::time_t now = std::time(nullptr);
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
      const fs::path& path = it->path();
      const std::string name = path.filename().string();
      struct stat st {};
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (is_temp_name(name)) {
        bool old = now - st.st_mtim.tv_sec > stale_age.count();
        bool dead = false;
        std::string_view rest = std::string_view(name).substr(kTempPrefix.size());
        long pid = std::strtol(std::string(rest.substr(0, rest.find('-'))).c_str(), nullptr, 10);
        if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) dead = true;
        if ((old || dead) && ::unlink(path.c_str()) == 0) ++stale;
        continue;
      }
      if (!name.ends_with(extension) || name.size() == extension.size()) continue;
      EntryFile f;
      f.path = path;
      f.rel = path.lexically_relative(dir_);
      f.size = static_cast<std::uint64_t>(st.st_size);
      f.mtime = st.st_mtim;
      fn(f);
    }
  } catch (...) {}
  return stale;
}

}  // namespace refenc::store
