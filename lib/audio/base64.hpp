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
/// size would exceed `max_bytes`. That size is checked before anything is allocated: from the text
/// length when that bound is within `max_bytes`, else by counting the text's symbols first.
std::string decode_base64(std::string_view text, std::string_view what, std::size_t max_bytes);

/// Upper bound of the decoded size of `text` (from its length alone).
constexpr std::size_t base64_decoded_bound(std::size_t text_chars) { return text_chars / 4 * 3 + 3; }

/// The size `text` decodes to, counted without decoding or allocating: its base64 symbols (neither
/// whitespace nor '='; other characters count too, the decoder refuses them) times 6 bits. With
/// `percent_escaped`, a "%XX" escape counts as the character it stands for (base64 inside a URI).
std::size_t base64_decoded_size(std::string_view text, bool percent_escaped = false);

}  // namespace refenc::audio
