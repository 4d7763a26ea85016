#include "py_voice_cache.hpp"

#include <utility>

namespace py = pybind11;

namespace refenc::python {

PyVoiceCache::PyVoiceCache(store::VoiceCacheOptions options, std::shared_ptr<store::RedisTier> shared,
                           std::shared_ptr<const ArtifactCodec> codec)
    : codec_(std::move(codec)) {
  py::gil_scoped_release nogil;
  local_ = std::make_shared<store::VoiceCache>(std::move(options));
  if (shared) shared_ = std::make_unique<store::SharedVoiceCache>(local_, std::move(shared));
}

bool PyVoiceCache::put(const store::VoiceKey& key, py::handle artifact) {
  Artifact entry = codec_->to_artifact(artifact);
  py::gil_scoped_release nogil;
  return shared_ ? shared_->put(key, entry) : local_->put(key, entry);
}

py::object PyVoiceCache::get(const store::VoiceKey& key) {
  std::shared_ptr<const Artifact> found;
  {
    py::gil_scoped_release nogil;
    found = shared_ ? shared_->get(key) : local_->get(key);
  }
  if (!found) return py::none();
  return codec_->from_artifact(*found);
}

bool PyVoiceCache::clear_voice(const std::string& voice_name, const std::optional<std::string>& model_type) {
  py::gil_scoped_release nogil;
  return shared_ ? shared_->clear_voice(voice_name, model_type) : local_->clear_voice(voice_name, model_type);
}

void PyVoiceCache::clear() {
  py::gil_scoped_release nogil;
  local_->clear();
}

std::size_t PyVoiceCache::voice_count() const {
  py::gil_scoped_release nogil;
  return local_->voice_count();
}

py::list PyVoiceCache::list(const std::optional<std::string>& voice_name) const {
  std::vector<store::VoiceEntry> entries;
  {
    py::gil_scoped_release nogil;
    entries = local_->list(voice_name);
  }
  py::list out;
  for (const auto& e : entries) {
    py::dict d;
    d["model"] = e.key.model_type;
    d["voice"] = e.key.voice_name;
    d["version"] = e.key.voice_version;
    d["artifact_kind"] = e.key.artifact_kind;
    d["bytes"] = e.bytes;
    d["path"] = e.path;
    out.append(std::move(d));
  }
  return out;
}

py::dict PyVoiceCache::stats() const {
  store::VoiceCacheStats s;
  {
    py::gil_scoped_release nogil;
    s = local_->stats();
  }
  py::dict d;
  d["entries"] = s.entries;
  d["memory_bytes"] = s.memory_bytes;
  d["max_voices"] = s.max_voices;
  d["hit_count"] = s.hit_count;
  d["miss_count"] = s.miss_count;
  d["cap_refusals"] = s.cap_refusals;
  d["delete_invalidation_counter"] = s.delete_invalidation_counter;
  if (shared_) d["shared_corrupt"] = shared_->corrupt();
  return d;
}

}  // namespace refenc::python
