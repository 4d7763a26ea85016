#include "audio/content_key.hpp"

#include "core/error.hpp"
#include "core/sha256.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <unistd.h>

namespace refenc::audio {
namespace {

constexpr std::uint64_t sentinel_block = 8192;

struct Range {
  std::uint64_t offset, length;
};

std::array<Range, 3> sentinel_ranges(std::uint64_t size) {
  const std::uint64_t len = std::min(sentinel_block, size);
  const std::uint64_t mid = size / 2 >= len / 2 ? size / 2 - len / 2 : 0;
  return {Range{0, len}, Range{mid, len}, Range{size - len, len}};
}

}  // namespace

std::string content_key(std::string_view bytes) { return sha256_hex(bytes); }

bool is_content_digest(std::string_view text) noexcept {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string sentinel_digest(std::string_view whole) {
  Sha256 h;
  const std::uint64_t size = whole.size();
  h.update(std::string_view(reinterpret_cast<const char*>(&size), sizeof size));
  for (const Range& r : sentinel_ranges(size)) h.update(whole.substr(r.offset, r.length));
  return h.hex_digest();
}

std::string sentinel_digest_of_file(int fd, std::uint64_t size) {
  Sha256 h;
  h.update(std::string_view(reinterpret_cast<const char*>(&size), sizeof size));
  char buf[sentinel_block];
  for (const Range& r : sentinel_ranges(size)) {
    std::uint64_t got = 0;
    while (got < r.length) {
      const ssize_t n = ::pread(fd, buf + got, r.length - got, static_cast<off_t>(r.offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // shrunk meanwhile: the digest simply differs
      got += static_cast<std::uint64_t>(n);
    }
    h.update(std::string_view(buf, got));
  }
  return h.hex_digest();
}

}  // namespace refenc::audio
