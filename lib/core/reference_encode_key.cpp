#include "core/reference_encode_key.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/sha256.hpp"

namespace refenc {

std::string ReferenceEncodeKey::canonical() const {
  // nlohmann::json objects are std::map-backed: keys come out sorted.
  nlohmann::json j = {
      {"model_id", model_id},         {"model_revision", model_revision},
      {"encoder_id", encoder_id},     {"encoder_config_hash", encoder_config_hash},
      {"artifact_kind", artifact_kind}, {"input_key", input_key},
      {"options_key", options_key},
  };
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
      hash_field(0x243f6a8885a308d3ULL, k.model_id),     hash_field(0x13198a2e03707344ULL, k.model_revision),
      hash_field(0xa4093822299f31d0ULL, k.encoder_id),   hash_field(0x082efa98ec4e6c89ULL, k.encoder_config_hash),
      hash_field(0x452821e638d01377ULL, k.artifact_kind), hash_field(0xbe5466cf34e90c6cULL, k.input_key),
      hash_field(0xc0ac29b7c97c50ddULL, k.options_key)};
  std::uint64_t h = 0;
  for (int i = 0; i < 7; ++i) h += std::rotl(lanes[i], 9 * i);
  h = mix(mix(h, 0x3f84d5b5b5470917ULL), h >> 31);
  return static_cast<std::size_t>(h);
}

}  // namespace refenc
