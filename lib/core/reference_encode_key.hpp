// ReferenceEncodeKey: everything that can change an encoded reference artifact, as one value.
//
// Two requests share a cache entry exactly when their keys are equal. A key names the model and
// checkpoint (`model_id`, `model_revision`), the encoder implementation and a hash of its real config
// (`encoder_id`, `encoder_config_hash`), what is produced (`artifact_kind`), the content identity of the
// reference (`input_key`, a SHA-256 digest, never a file name or URL) and the encode options that
// affect the artifact (`options_key`, e.g. a digest of the reference text).
//
//   ReferenceEncodeKey key{"fish-s2-pro", "proxy-1", "modded-dac", cfg_hash, "codes", sha, ""};
//   key.canonical();  // {"artifact_kind":"codes","encoder_config_hash":...} (sorted keys)
//   key.digest();     // sha256 of canonical(): a stable file name
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace refenc {

struct ReferenceEncodeKey {
  std::string model_id;
  std::string model_revision;
  std::string encoder_id;
  std::string encoder_config_hash;
  std::string artifact_kind;
  std::string input_key;
  std::string options_key;

  friend bool operator==(const ReferenceEncodeKey&, const ReferenceEncodeKey&) = default;

  /// JSON object of the seven fields with sorted keys and no whitespace, byte for byte what Python's
  /// `json.dumps(fields, sort_keys=True, separators=(",", ":"))` writes (ensure_ascii: non-ASCII as
  /// \uXXXX, astral characters as surrogate pairs, control characters and DEL as \u00XX except the
  /// short escapes \b \f \n \r \t). Stable across processes and languages. Throws Error(bad_input)
  /// when a field is not well-formed UTF-8.
  std::string canonical() const;
  /// Lower-case hex SHA-256 of the UTF-8 bytes of canonical() (throws as canonical() does).
  std::string digest() const;
  /// Parses canonical() output back; throws Error(bad_input) on anything else.
  static ReferenceEncodeKey from_canonical(const std::string& text);
};

/// Fast in-process hash of all seven fields (not stable across builds; use digest() for files).
std::size_t hash_value(const ReferenceEncodeKey& key) noexcept;

}  // namespace refenc

// Deliberately not noexcept: libstdc++'s unordered containers then cache each node's hash, so a
// lookup hashes the probe key once instead of rehashing the keys along its bucket chain.
template <>
struct std::hash<refenc::ReferenceEncodeKey> {
  std::size_t operator()(const refenc::ReferenceEncodeKey& k) const { return refenc::hash_value(k); }
};
