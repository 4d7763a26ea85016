#include "store/voice_cache.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>

#include "core/error.hpp"
#include "core/sha256.hpp"
#include "store/entry_format.hpp"
#include "store/file_lock.hpp"

namespace fs = std::filesystem;

namespace refenc::store {
namespace {

constexpr std::size_t kMaxField = 64;

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string check_field(std::string_view what, std::string_view value) {
  if (value.empty()) throw Error(ErrorKind::bad_input, std::string(what) + " is empty");
  if (value.size() > kMaxField)
    throw Error(ErrorKind::bad_input, std::string(what) + " '" + std::string(value.substr(0, 16)) +
                                          "...' is longer than " + std::to_string(kMaxField) + " bytes");
  if (has_control(value)) throw Error(ErrorKind::bad_input, std::string(what) + " contains control characters");
  return std::string(value);
}

VoiceKey normalized(const VoiceKey& k) {
  return {check_field("model type", k.model_type), VoiceCache::normalize_voice_name(k.voice_name),
          check_field("voice version", k.voice_version), check_field("artifact kind", k.artifact_kind)};
}

std::string canonical_of(const VoiceKey& n) {
  nlohmann::json j = {{"artifact_kind", n.artifact_kind},
                      {"model_type", n.model_type},
                      {"voice_name", n.voice_name},
                      {"voice_version", n.voice_version}};
  return j.dump();
}

}  // namespace

std::string VoiceKey::canonical() const { return canonical_of(normalized(*this)); }

VoiceKey VoiceKey::from_canonical(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.size() != 4) throw Error(ErrorKind::bad_input, "not a voice key");
    VoiceKey k{j.at("model_type").get<std::string>(), j.at("voice_name").get<std::string>(),
               j.at("voice_version").get<std::string>(), j.at("artifact_kind").get<std::string>()};
    if (k.canonical() != text) throw Error(ErrorKind::bad_input, "not a canonical voice key");
    return k;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorKind::bad_input, std::string("not a voice key: ") + e.what());
  }
}

std::string VoiceCache::normalize_voice_name(std::string_view name) {
  if (name.empty()) throw Error(ErrorKind::bad_input, "voice name is empty");
  const std::string shown(name.substr(0, 32));
  if (name.size() > kMaxField)
    throw Error(ErrorKind::bad_input,
                "voice name '" + shown + "...' is longer than " + std::to_string(kMaxField) + " bytes");
  if (has_control(name)) throw Error(ErrorKind::bad_input, "voice name contains control characters");
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos)
    throw Error(ErrorKind::bad_input, "voice name '" + shown + "' contains a path separator");
  if (name.front() == '.') throw Error(ErrorKind::bad_input, "voice name '" + shown + "' starts with '.'");
  if (name.front() == ' ' || name.back() == ' ')
    throw Error(ErrorKind::bad_input, "voice name '" + shown + "' starts or ends with a space");
  std::string out(name);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

VoiceCache::VoiceCache(VoiceCacheOptions options) : options_(std::move(options)) {
  if (options_.max_voices < 1) throw Error(ErrorKind::config, "max_voices must be at least 1");
  counters_.max_voices = options_.max_voices;
  if (options_.persist) {
    fs::path root = options_.root.empty() ? default_cache_root() : options_.root;
    folder_ = std::make_unique<EntryFolder>(root, fs::path("voices") / ("v" + std::to_string(kEntryFormat)),
                                            "voice cache folder");
  }
}

fs::path VoiceCache::relative_path(const VoiceKey& n, const std::string& canonical) {
  return fs::path(sanitize_component(n.model_type)) / sanitize_component(n.voice_name) /
         (sha256_hex(canonical).substr(0, 40) + ".pt");
}

void VoiceCache::erase_locked(const std::string& canonical) {
  auto it = slots_.find(canonical);
  if (it == slots_.end()) return;
  memory_bytes_ -= it->second.bytes;
  slots_.erase(it);
}

void VoiceCache::insert_locked(const std::string& canonical, const VoiceKey& key, std::shared_ptr<const Artifact> a) {
  erase_locked(canonical);
  const std::uint64_t bytes = a->byte_size();
  slots_.emplace(canonical, Slot{key, std::move(a), bytes});
  memory_bytes_ += bytes;
}

std::set<std::string> VoiceCache::voice_folders_locked() const {
  std::set<std::string> names;
  for (const auto& [canonical, slot] : slots_) names.insert(sanitize_component(slot.key.voice_name));
  if (!persistent()) return names;
  std::error_code ec;
  for (fs::directory_iterator model(folder_->dir(), ec), end; !ec && model != end; model.increment(ec)) {
    std::error_code type_ec;
    if (!model->is_directory(type_ec) || model->is_symlink(type_ec)) continue;
    std::error_code voice_ec;
    for (fs::directory_iterator voice(model->path(), voice_ec); !voice_ec && voice != end; voice.increment(voice_ec)) {
      if (!voice->is_directory(type_ec) || voice->is_symlink(type_ec)) continue;
      const std::string name = voice->path().filename().string();
      if (names.count(name)) continue;
      std::error_code file_ec;
      for (fs::directory_iterator f(voice->path(), file_ec); !file_ec && f != end; f.increment(file_ec)) {
        const std::string file = f->path().filename().string();
        if (!is_temp_name(file) && f->path().extension() == ".pt") {
          names.insert(name);
          break;
        }
      }
    }
  }
  return names;
}

void VoiceCache::check_cap_locked(const std::string& name) {
  const std::set<std::string> voices = voice_folders_locked();
  if (voices.count(sanitize_component(name)) || voices.size() < options_.max_voices) return;
  ++counters_.cap_refusals;
  throw Error(ErrorKind::bad_input, "voice cap reached: " + std::to_string(voices.size()) +
                                        " registered voices (max_voices " + std::to_string(options_.max_voices) + ")");
}

void VoiceCache::check_cap(std::string_view voice_name) {
  const std::string name = normalize_voice_name(voice_name);
  std::lock_guard lock(mutex_);
  check_cap_locked(name);
}

std::size_t VoiceCache::voice_count() const {
  std::lock_guard lock(mutex_);
  return voice_folders_locked().size();
}

std::shared_ptr<const Artifact> VoiceCache::get(const VoiceKey& key) {
  const VoiceKey n = normalized(key);
  const std::string canonical = canonical_of(n);
  std::lock_guard lock(mutex_);
  if (auto it = slots_.find(canonical); it != slots_.end()) {
    ++counters_.hit_count;
    return it->second.artifact;
  }
  if (persistent()) {
    const fs::path rel = relative_path(n, canonical);
    FileRead r = folder_->read(rel, options_.max_entry_bytes, /*touch=*/true);
    if (r.status == ReadStatus::ok) {
      try {
        auto a = std::make_shared<const Artifact>(decode_entry(r.bytes, canonical));
        insert_locked(canonical, n, a);
        ++counters_.hit_count;
        return a;
      } catch (const EntryError&) {
        folder_->remove_if_same(rel, r.id);
      }
    } else if (r.status == ReadStatus::io_error) {
      folder_->remove(rel);
    }
  }
  ++counters_.miss_count;
  return nullptr;
}

bool VoiceCache::put(const VoiceKey& key, const Artifact& artifact) {
  const VoiceKey n = normalized(key);
  const std::string canonical = canonical_of(n);
  std::lock_guard lock(mutex_);
  return put_locked(n, canonical, artifact);
}

std::optional<bool> VoiceCache::put_if_current(const VoiceKey& key, const Artifact& artifact,
                                               std::uint64_t generation) {
  const VoiceKey n = normalized(key);
  const std::string canonical = canonical_of(n);
  std::lock_guard lock(mutex_);
  if (generation_locked(n.voice_name) != generation) return std::nullopt;
  return put_locked(n, canonical, artifact);
}

std::uint64_t VoiceCache::generation(std::string_view voice_name) const {
  const std::string name = normalize_voice_name(voice_name);
  std::lock_guard lock(mutex_);
  return generation_locked(name);
}

std::uint64_t VoiceCache::generation_locked(const std::string& name) const {
  auto it = removals_.find(name);
  return clears_ + (it == removals_.end() ? 0 : it->second);  // both only grow: so does their sum
}

bool VoiceCache::put_locked(const VoiceKey& n, const std::string& canonical, const Artifact& artifact) {
  auto a = std::make_shared<const Artifact>(artifact);
  std::unique_ptr<FileLock> registering;  // other processes count and register one at a time
  if (persistent()) lock_file(folder_->dir() / "register.lock", registering);
  check_cap_locked(n.voice_name);
  bool written = false;
  if (persistent() && artifact.byte_size() <= options_.max_entry_bytes) {
    std::vector<char> bytes = encode_entry(canonical, artifact);
    if (bytes.size() <= options_.max_entry_bytes) written = folder_->write(relative_path(n, canonical), bytes).ok;
  }
  insert_locked(canonical, n, std::move(a));
  return written;
}

bool VoiceCache::clear_voice(std::string_view voice_name, const std::optional<std::string>& model_type) {
  const std::string name = normalize_voice_name(voice_name);
  std::lock_guard lock(mutex_);
  ++removals_[name];  // an encode of this voice in progress must not be stored after this
  bool removed = false;
  std::vector<std::string> doomed;
  for (const auto& [canonical, slot] : slots_)
    if (slot.key.voice_name == name && (!model_type || slot.key.model_type == *model_type)) doomed.push_back(canonical);
  for (const auto& c : doomed) erase_locked(c);
  removed = !doomed.empty();
  if (persistent()) {
    std::vector<fs::path> models;
    if (model_type) {
      models.push_back(sanitize_component(*model_type));
    } else {
      std::error_code ec;
      for (fs::directory_iterator it(folder_->dir(), ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory(ec)) models.push_back(it->path().filename());
    }
    for (const auto& model : models) {
      const fs::path sub = model / sanitize_component(name);
      std::vector<fs::path> rels;
      folder_->walk(sub, [&](const EntryFile& f) { rels.push_back(f.rel); });
      for (const auto& rel : rels)
        if (folder_->remove(rel) > 0) removed = true;
      std::error_code ec;
      fs::remove(folder_->dir() / sub, ec);  // only when empty
    }
  }
  if (removed) ++counters_.delete_invalidation_counter;
  return removed;
}

void VoiceCache::clear() {
  std::lock_guard lock(mutex_);
  ++clears_;
  slots_.clear();
  memory_bytes_ = 0;
  if (persistent()) {
    std::vector<fs::path> rels;
    folder_->walk({}, [&](const EntryFile& f) { rels.push_back(f.rel); });
    for (const auto& rel : rels) folder_->remove(rel);
  }
}

std::vector<VoiceEntry> VoiceCache::list(const std::optional<std::string>& voice_name) const {
  const std::optional<std::string> name =
      voice_name ? std::optional<std::string>(normalize_voice_name(*voice_name)) : std::nullopt;
  std::vector<VoiceEntry> out;
  std::lock_guard lock(mutex_);
  if (persistent()) {
    std::vector<EntryFile> files;
    folder_->walk({}, [&](const EntryFile& f) { files.push_back(f); });
    for (const auto& f : files) {
      FileRead r = folder_->read(f.rel, options_.max_entry_bytes, /*touch=*/false);
      if (r.status != ReadStatus::ok) continue;
      try {
        std::string key_text;
        decode_entry(r.bytes, "", &key_text);
        VoiceKey k = VoiceKey::from_canonical(key_text);
        if (!name || k.voice_name == *name) out.push_back({k, f.size, f.path.string()});
      } catch (const std::exception&) {
        // corrupt entries are skipped here; get() deletes them
      }
    }
  } else {
    for (const auto& [canonical, slot] : slots_)
      if (!name || slot.key.voice_name == *name) out.push_back({slot.key, slot.bytes, {}});
  }
  std::sort(out.begin(), out.end(), [](const VoiceEntry& a, const VoiceEntry& b) {
    return std::tie(a.key.model_type, a.key.voice_name, a.key.voice_version, a.key.artifact_kind) <
           std::tie(b.key.model_type, b.key.voice_name, b.key.voice_version, b.key.artifact_kind);
  });
  return out;
}

VoiceCacheStats VoiceCache::stats() const {
  std::lock_guard lock(mutex_);
  VoiceCacheStats s = counters_;
  s.entries = slots_.size();
  s.memory_bytes = memory_bytes_;
  return s;
}

}  // namespace refenc::store
