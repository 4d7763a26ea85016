#include "audio/data_uri.hpp"

#include "audio/base64.hpp"
#include "audio/payload_text.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cctype>

namespace refenc::audio {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

[[noreturn]] void malformed_uri(std::string_view what, const std::string& reason) {
  throw Error(ErrorKind::bad_input, std::string(what) + ": malformed data URI: " + reason);
}

bool accepted_media_type(const std::string& t) {
  return t.empty() || t.starts_with("audio/") || t.starts_with("video/") || t == "application/octet-stream" ||
         t == "application/ogg";
}

std::string percent_decode(std::string_view text, std::string_view what, std::size_t max_bytes, std::size_t offset) {
  if (text.size() > max_bytes) {
    // Each escape shortens the text by two: count them before allocating for the result.
    std::size_t escapes = 0;
    for (std::size_t i = text.find('%'); i != std::string_view::npos; i = text.find('%', i + 3)) ++escapes;
    if (text.size() - std::min(text.size(), 2 * escapes) > max_bytes) refuse_too_large(what, max_bytes);
  }
  std::string out;
  out.reserve(std::min(text.size(), max_bytes + 1));
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      const int hi = i + 1 < text.size() ? hex_digit_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_digit_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) malformed_uri(what, "bad percent escape at offset " + std::to_string(offset + i));
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    out.push_back(c);
    if (out.size() > max_bytes) refuse_too_large(what, max_bytes);
  }
  return out;
}

}  // namespace

DataUri parse_data_uri(std::string_view uri, std::string_view what) {
  if (uri.size() < 5 || lower(uri.substr(0, 5)) != "data:") malformed_uri(what, "does not start with \"data:\"");
  const auto comma = uri.find(',');
  if (comma == std::string_view::npos) malformed_uri(what, "no ',' separating the header from the data");
  const std::string_view header = uri.substr(5, comma - 5);
  DataUri out;
  out.payload = uri.substr(comma + 1);
  std::size_t start = 0;
  bool first = true;
  while (start <= header.size()) {
    auto end = header.find(';', start);
    if (end == std::string_view::npos) end = header.size();
    const std::string part = lower(trim(header.substr(start, end - start)));
    if (first) {
      out.media_type = part;
      if (!part.empty() && part.find('/') == std::string::npos)
        malformed_uri(what, "media type \"" + part.substr(0, 40) + "\" is not type/subtype");
    } else if (part == "base64") {
      if (end != header.size()) malformed_uri(what, "\";base64\" must be the last parameter");
      out.base64 = true;
    } else if (!part.empty() && part.find('=') == std::string::npos) {
      malformed_uri(what, "parameter \"" + part.substr(0, 40) + "\" is not name=value");
    }
    first = false;
    start = end + 1;
  }
  if (!accepted_media_type(out.media_type))
    throw Error(ErrorKind::bad_input,
                std::string(what) + ": media type \"" + out.media_type.substr(0, 40) + "\" is not audio");
  return out;
}

std::string decode_data_uri(std::string_view uri, std::string_view what, std::size_t max_bytes) {
  const DataUri parsed = parse_data_uri(uri, what);
  const std::size_t offset = static_cast<std::size_t>(parsed.payload.data() - uri.data());
  if (!parsed.base64) return percent_decode(parsed.payload, what, max_bytes, offset);
  // Base64 inside a URI may itself be percent-encoded ('+' as %2B, '=' as %3D).
  if (parsed.payload.find('%') == std::string_view::npos) return decode_base64(parsed.payload, what, max_bytes);
  if (base64_decoded_size(parsed.payload, /*percent_escaped=*/true) > max_bytes) refuse_too_large(what, max_bytes);
  return decode_base64(percent_decode(parsed.payload, what, 2 * max_bytes + 16, offset), what, max_bytes);
}

}  // namespace refenc::audio
