// Helpers shared by the text forms of a reference payload (base64, data URIs): hex digits of percent
// escapes and the one error a payload over its byte limit raises. Internal to lib/audio.
//
//   if (hex_digit_value(text[i]) < 0) ...;     // -1 unless 0-9, a-f, A-F
//   if (n > max_bytes) refuse_too_large("data URI (2 MB)", max_bytes);   // Error(bad_input)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace refenc::audio {

/// The value of one hex digit, or -1.
inline int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Throws Error(bad_input) naming `what` and the limit.
[[noreturn]] inline void refuse_too_large(std::string_view what, std::size_t max_bytes) {
  throw Error(ErrorKind::bad_input,
              std::string(what) + ": payload too large (over the " + std::to_string(max_bytes) + " byte limit)");
}

}  // namespace refenc::audio
