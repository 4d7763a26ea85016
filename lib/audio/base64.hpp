// Base64 decoding for reference payloads (standard and URL-safe alphabets), refusing malformed text.
//
//   std::string bytes = audio::decode_base64(text, "base64 payload (120 chars)", 64u << 20);
//   // throws Error(bad_input, "base64 payload (120 chars): malformed base64: invalid character ...")
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace refenc::audio {

/// Decodes base64 text. ASCII whitespace is ignored; '=' padding is optional but nothing may follow
/// it; '+/' and '-_' are both accepted. Refuses, naming `what`, a malformed text or one whose decoded
/// size would exceed `max_bytes` (checked from the text length before decoding).
std::string decode_base64(std::string_view text, std::string_view what, std::size_t max_bytes);

/// Upper bound of the decoded size of `text` (from its length alone).
constexpr std::size_t base64_decoded_bound(std::size_t text_chars) { return text_chars / 4 * 3 + 3; }

}  // namespace refenc::audio
