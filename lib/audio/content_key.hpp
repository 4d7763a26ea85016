// Content identity of reference bytes: the SHA-256 hex of exactly the bytes the model consumes.
// Bytes, base64 and data URIs key by their decoded bytes, so one clip sent two ways shares a key,
// and a local file keys by its whole content (reference_path_cache_key), never by its name.
//
//   std::string key = audio::content_key(bytes);     // 64 lower-case hex characters
//   audio::is_content_digest(key);                   // true
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace refenc::audio {

/// SHA-256 hex of `bytes` (libcrypto, via core/sha256.hpp).
std::string content_key(std::string_view bytes);

/// True for a 64-character lower-case hex string: the form of every content key.
bool is_content_digest(std::string_view text) noexcept;

/// Digest of the first, middle and last 8 KiB of `whole` (and its size): the cheap re-check the
/// path-key memo does on a hit. sentinel_digest_of_file computes the same for an open file.
std::string sentinel_digest(std::string_view whole);
std::string sentinel_digest_of_file(int fd, std::uint64_t size);

}  // namespace refenc::audio
