// PyVoiceCache: registered voices (store::VoiceCache, optionally shared through Redis with
// store::SharedVoiceCache) for Python artifacts.
//
// Artifacts go in and come out in their Python form (a tensor, or a dict of tensors and strings;
// ArtifactCodec converts them); the file and network work runs with the GIL released. Errors are
// refenc::Error (bad_input for a bad voice name or the voice cap), which the module raises as
// ValueError.
//
//   PyVoiceCache voices({.root = "/var/cache/refenc", .max_voices = 1000}, nullptr, codec);  // GIL held
//   voices.put({"fish-s2-pro", "alice", "1", "codes"}, tensor);
//   pybind11::object hit = voices.get({"fish-s2-pro", "ALICE", "1", "codes"});   // None when absent
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include "artifact_codec.hpp"
#include "store/redis_tier.hpp"
#include "store/shared_voice_cache.hpp"
#include "store/voice_cache.hpp"

namespace refenc::python {

class PyVoiceCache {
 public:
  /// `shared`: the Redis tier every replica shares, or null for this host only.
  PyVoiceCache(store::VoiceCacheOptions options, std::shared_ptr<store::RedisTier> shared,
               std::shared_ptr<const ArtifactCodec> codec);

  /// Stores `artifact` for `key`; true when it was written to disk (or, when shared, to Redis).
  bool put(const store::VoiceKey& key, pybind11::handle artifact);
  /// The artifact of `key` (a new Python object), or None.
  pybind11::object get(const store::VoiceKey& key);
  /// Removes a voice (of one model only, when given); true when anything was removed.
  bool clear_voice(const std::string& voice_name, const std::optional<std::string>& model_type);
  /// Removes every local voice entry.
  void clear();
  std::size_t voice_count() const;
  /// Stored entries as dicts (model, voice, version, artifact_kind, bytes, path).
  pybind11::list list(const std::optional<std::string>& voice_name) const;
  pybind11::dict stats() const;
  bool persistent() const noexcept { return local_->persistent(); }
  std::string folder() const { return local_->folder().string(); }

 private:
  std::shared_ptr<store::VoiceCache> local_;
  std::unique_ptr<store::SharedVoiceCache> shared_;
  std::shared_ptr<const ArtifactCodec> codec_;
};

}  // namespace refenc::python
