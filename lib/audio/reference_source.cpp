// ReferenceSource: construction, command-line parsing and descriptions for messages.
#include "audio/reference_loader.hpp"

#include <cctype>

namespace refenc::audio {
namespace {

bool has_prefix_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

/// "scheme://" with an RFC 3986 scheme: any such text is a URL, never a path.
bool has_url_scheme(std::string_view text) {
  const auto sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (std::size_t i = 1; i < sep; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

std::string shorten(std::string_view text, std::size_t max_chars = 160) {
  std::string out;
  for (char c : text.substr(0, max_chars)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? '?' : c);
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

/// scheme://host/path without user info, query or fragment (which may carry credentials).
std::string redact_url(std::string_view url) {
  const auto sep = url.find("://");
  std::string_view rest = url.substr(sep + 3);
  if (const auto end = rest.find_first_of("?#"); end != std::string_view::npos) rest = rest.substr(0, end);
  const auto slash = rest.find('/');
  const auto at = rest.rfind('@', slash);
  if (at != std::string_view::npos) rest = rest.substr(at + 1);
  return shorten(std::string(url.substr(0, sep + 3)) + std::string(rest));
}

}  // namespace

ReferenceSource ReferenceSource::from_path(std::string path) { return {Kind::path, std::move(path), {}}; }
ReferenceSource ReferenceSource::from_bytes(std::string bytes) { return {Kind::bytes, std::move(bytes), {}}; }
ReferenceSource ReferenceSource::from_base64(std::string text) { return {Kind::base64, std::move(text), {}}; }
ReferenceSource ReferenceSource::from_data_uri(std::string uri) { return {Kind::data_uri, std::move(uri), {}}; }
ReferenceSource ReferenceSource::from_url(std::string url, std::string content_digest) {
  return {Kind::url, std::move(url), std::move(content_digest)};
}

ReferenceSource ReferenceSource::parse(std::string_view text) {
  if (has_prefix_nocase(text, "data:")) return from_data_uri(std::string(text));
  if (has_url_scheme(text)) return from_url(std::string(text));
  return from_path(std::string(text));
}

std::string ReferenceSource::describe() const {
  switch (kind) {
    case Kind::path: return value.empty() ? "(empty path)" : shorten(value, 400);
    case Kind::bytes: return std::to_string(value.size()) + " raw bytes";
    case Kind::base64: return "base64 payload (" + std::to_string(value.size()) + " chars)";
    case Kind::data_uri: return "data URI (" + std::to_string(value.size()) + " bytes)";
    case Kind::url: return "URL " + redact_url(value);
  }
  return "reference";
}

}  // namespace refenc::audio
