#include "core/reference_encode_key.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace refenc {

namespace {
[[noreturn]] void not_utf8(const char* field, std::size_t at) {
  throw Error(ErrorKind::bad_input,
              std::string("key field ") + field + " is not valid UTF-8 (byte " + std::to_string(at) + ")");
}

/// Appends `s` as a JSON string the way Python's json.dumps does by default (ensure_ascii=True):
/// printable ASCII (0x20..0x7e) as is except `"` and the backslash, which are escaped; \b \f \n \r \t as
/// short escapes; every other code point as \uXXXX (lower-case hex), above U+FFFF as a UTF-16
/// surrogate pair. Throws Error(bad_input) for bytes that are not well-formed UTF-8.
void append_json_string(std::string& out, std::string_view s, const char* field) {
  static constexpr char hex[] = "0123456789abcdef";
  auto u_escape = [&](std::uint32_t u) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex[(u >> shift) & 0xf];
  };
  auto bad = [&](std::size_t at) { not_utf8(field, at); };
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f)
            u_escape(c);
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // Multi-byte sequence: strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if (c >= 0xc2 && c <= 0xdf)
      n = 2, cp = c & 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
      n = 3, cp = c & 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
      n = 4, cp = c & 0x07, min = 0x10000;
    else
      not_utf8(field, i);
    if (i + n > s.size()) bad(i);
    for (std::size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) bad(i + k);
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) bad(i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      u_escape(0xd800 + (cp >> 10));
      u_escape(0xdc00 + (cp & 0x3ff));
    } else {
      u_escape(cp);
    }
    i += n;
  }
  out += '"';
}
}  // namespace

std::string ReferenceEncodeKey::canonical() const {
  // Python: json.dumps(fields, sort_keys=True, separators=(",", ":")), ensure_ascii left at True.
  const std::pair<const char*, const std::string*> sorted[] = {
      {"artifact_kind", &artifact_kind}, {"encoder_config_hash", &encoder_config_hash},
      {"encoder_id", &encoder_id},       {"input_key", &input_key},
      {"model_id", &model_id},           {"model_revision", &model_revision},
      {"options_key", &options_key},
  };
  std::string out;
  out.reserve(160 + model_id.size() + model_revision.size() + encoder_id.size() + encoder_config_hash.size() +
              artifact_kind.size() + input_key.size() + options_key.size());
  out += '{';
  for (const auto& [name, value] : sorted) {
    if (out.size() > 1) out += ',';
    out += '"';
    out += name;
    out += "\":";
    append_json_string(out, *value, name);
  }
  out += '}';
  return out;
}

std::string ReferenceEncodeKey::digest() const { return sha256_hex(canonical()); }

ReferenceEncodeKey ReferenceEncodeKey::from_canonical(const std::string& text) {
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.size() != 7) throw Error(ErrorKind::bad_input, "not a canonical key: wrong fields");
    ReferenceEncodeKey k{j.at("model_id").get<std::string>(),      j.at("model_revision").get<std::string>(),
                         j.at("encoder_id").get<std::string>(),    j.at("encoder_config_hash").get<std::string>(),
                         j.at("artifact_kind").get<std::string>(), j.at("input_key").get<std::string>(),
                         j.at("options_key").get<std::string>()};
    return k;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::bad_input, std::string("not a canonical key: ") + e.what());
  }
}

namespace {
// A multiply-xorshift mix over 8-byte words: keys are hashed on every lookup under the service
// lock's caller, and std::hash<std::string> over seven fields cost ~3x more. Not for files: digest().
inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  h ^= v;
  h *= 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 29);
}

inline std::uint64_t hash_field(std::uint64_t h, const std::string& s) noexcept {
  const char* p = s.data();
  std::size_t n = s.size();
  h = mix(h, n);
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h, w);
  }
  // Tail of 1..7 bytes in constant time: two overlapping 4-byte reads, or three single bytes.
  if (n >= 4) {
    std::uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + n - 4, 4);
    h = mix(h, (std::uint64_t(a) << 32) | b);
  } else if (n > 0) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    h = mix(h, (std::uint64_t(u[0]) << 16) | (std::uint64_t(u[n / 2]) << 8) | u[n - 1]);
  }
  return h;
}
}  // namespace

std::size_t hash_value(const ReferenceEncodeKey& k) noexcept {
  // One lane per field, each with its own seed, so the seven multiply chains overlap instead of
  // running one after another (this hash is a fifth of a memory hit's cost); then one final mix.
  const std::uint64_t lanes[7] = {
      hash_field(0x243f6a8885a308d3ULL, k.model_id),      hash_field(0x13198a2e03707344ULL, k.model_revision),
      hash_field(0xa4093822299f31d0ULL, k.encoder_id),    hash_field(0x082efa98ec4e6c89ULL, k.encoder_config_hash),
      hash_field(0x452821e638d01377ULL, k.artifact_kind), hash_field(0xbe5466cf34e90c6cULL, k.input_key),
      hash_field(0xc0ac29b7c97c50ddULL, k.options_key)};
  std::uint64_t h = 0;
  for (int i = 0; i < 7; ++i) h += std::rotl(lanes[i], 9 * i);
  h = mix(mix(h, 0x3f84d5b5b5470917ULL), h >> 31);
  return static_cast<std::size_t>(h);
}

}  // namespace refenc
