// RFC 2397 data URIs ("data:audio/wav;base64,UklGR..."): parsing and decoding to the bytes they carry.
//
//   audio::DataUri u = audio::parse_data_uri(uri, "data URI (1234 bytes)");
//   u.media_type;   // "audio/wav" ("" when omitted)
//   std::string bytes = audio::decode_data_uri(uri, "data URI (1234 bytes)", 64u << 20);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace refenc::audio {

/// The parts of a data URI; `payload` views into the parsed text.
struct DataUri {
  std::string media_type;    ///< Lower-cased type/subtype, "" when omitted.
  bool base64 = false;       ///< ";base64" was present; otherwise the payload is percent-encoded.
  std::string_view payload;  ///< Everything after the first ','.
};

/// Splits a data URI ("data:" is matched case-insensitively). Refuses, naming `what`, text without
/// the "data:" scheme or the ',' separator, or a media type that is neither empty, audio/*, video/*
/// (containers such as video/ogg) nor application/octet-stream or application/ogg.
DataUri parse_data_uri(std::string_view uri, std::string_view what);

/// Parses and decodes a data URI (base64 or percent-encoded) to its bytes, refusing payloads over
/// `max_bytes` and malformed encodings.
std::string decode_data_uri(std::string_view uri, std::string_view what, std::size_t max_bytes);

}  // namespace refenc::audio
