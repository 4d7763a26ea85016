// Entry format: one cached artifact as a self-describing torch archive (the bytes of a `.pt` file).
//
// An entry is what `torch::pickle_save` writes for a Dict[str, Any] holding the format version, the
// full key string, the artifact's tensors (same dtype and shape), its metadata strings and a SHA-256
// checksum of the tensor data and metadata. Python opens it with `torch.load(path, weights_only=True)`.
// Decoding verifies the version, the key and the checksum, and throws EntryError on any mismatch.
//
//   std::vector<char> bytes = store::encode_entry(key.canonical(), artifact);
//   Artifact back = store::decode_entry(bytes, key.canonical());   // throws EntryError if not the same
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "store/artifact.hpp"

namespace refenc::store {

/// Version of the entry format; part of the folder layout (`v<version>`) and of every entry.
inline constexpr int kEntryFormat = 1;

/// Why an entry could not be used. Never escapes the tiers: they turn it into a miss and a counter.
class EntryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Lower-case hex SHA-256 over every tensor (name, dtype, shape, data) and metadata pair, in name order.
std::string artifact_checksum(const Artifact& artifact);

/// The archive bytes of `artifact` stored under `key_text`. `format` is for tests of older versions.
std::vector<char> encode_entry(const std::string& key_text, const Artifact& artifact, int format = kEntryFormat);

/// The artifact in `bytes`; throws EntryError when the bytes are not an entry, the version is not
/// kEntryFormat, the stored key is not `expected_key` (skipped when empty) or the checksum differs.
/// `stored_key`, when given, receives the key string found in the entry.
Artifact decode_entry(const std::vector<char>& bytes, const std::string& expected_key,
                      std::string* stored_key = nullptr);

}  // namespace refenc::store
