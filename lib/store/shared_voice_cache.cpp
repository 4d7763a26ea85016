#include "store/shared_voice_cache.hpp"

#include "core/error.hpp"
#include "core/log.hpp"
#include "store/entry_format.hpp"

namespace refenc::store {

SharedVoiceCache::SharedVoiceCache(std::shared_ptr<VoiceCache> local, std::shared_ptr<RedisTier> shared)
    : local_(std::move(local)), shared_(std::move(shared)) {
  if (!local_ || !shared_) throw Error(ErrorKind::config, "SharedVoiceCache needs a local cache and a shared tier");
  const std::string& prefix = shared_->options().prefix;
  namespace_ = (prefix.empty() ? "" : prefix + ":") + "refenc:voices:v" + std::to_string(kEntryFormat) + ":";
}

std::string SharedVoiceCache::hash_key(const std::string& voice_name) const {
  return namespace_ + "voice:" + voice_name;
}

std::string SharedVoiceCache::scoped(const std::string& canonical) const {
  const std::string& prefix = shared_->options().prefix;
  return prefix.empty() ? canonical : "{\"deployment\":\"" + prefix + "\",\"voice\":" + canonical + "}";
}

std::optional<std::string> SharedVoiceCache::generation() {
  std::optional<RedisReply> r = shared_->client().command({"GET", namespace_ + "generation"});
  if (!r || r->type == RedisReply::Type::error) return std::nullopt;
  return r->type == RedisReply::Type::nil ? std::string("0") : r->str;
}

void SharedVoiceCache::bump_generation() { shared_->client().command({"INCR", namespace_ + "generation"}); }

std::shared_ptr<const Artifact> SharedVoiceCache::get(const VoiceKey& key) {
  const std::string canonical = key.canonical();  // validates
  const VoiceKey n = VoiceKey::from_canonical(canonical);
  const std::optional<std::string> gen = generation();
  if (!gen) return local_->get(key);  // Redis unavailable: the local cache alone
  {
    std::lock_guard lock(mutex_);
    if (auto it = seen_.find(canonical); it != seen_.end() && it->second == *gen)
      if (auto hit = local_->get(key)) return hit;
  }
  std::optional<RedisReply> r = shared_->client().command({"HGET", hash_key(n.voice_name), canonical});
  if (!r || r->type == RedisReply::Type::error) return local_->get(key);
  std::shared_ptr<const Artifact> out;
  if (r->type == RedisReply::Type::string) {
    try {
      out = std::make_shared<const Artifact>(
          decode_entry(std::vector<char>(r->str.begin(), r->str.end()), scoped(canonical)));
      local_->put(key, *out);
    } catch (const EntryError& e) {
      {
        std::lock_guard lock(mutex_);
        ++corrupt_;
      }
      shared_->client().command({"HDEL", hash_key(n.voice_name), canonical});
      if (log::level() <= log::Level::debug) log::debug("shared voice " + n.voice_name + ": " + e.what() + ": deleted");
      return local_->get(key);  // this replica's copy, if any, still stands
    }
  } else if (auto gone = shared_->client().command({"SISMEMBER", namespace_ + "removed", canonical});
             gone && gone->integer == 1) {
    // Removed on another replica: drop this replica's copy of that voice and model.
    local_->clear_voice(n.voice_name, n.model_type);
  } else {
    out = local_->get(key);  // never shared (registered while Redis was away): the local copy stands
  }
  std::lock_guard lock(mutex_);
  seen_[canonical] = *gen;
  return out;
}

bool SharedVoiceCache::put(const VoiceKey& key, const Artifact& artifact) {
  const std::string canonical = key.canonical();
  const VoiceKey n = VoiceKey::from_canonical(canonical);
  local_->put(key, artifact);
  const std::vector<char> bytes = encode_entry(scoped(canonical), artifact);
  std::optional<RedisReply> r = shared_->client().command(
      {"HSET", hash_key(n.voice_name), canonical, std::string_view(bytes.data(), bytes.size())});
  if (!r || r->type == RedisReply::Type::error) return false;
  shared_->client().command({"SREM", namespace_ + "removed", canonical});
  bump_generation();
  if (auto g = generation()) {
    std::lock_guard lock(mutex_);
    seen_[canonical] = *g;
  }
  return true;
}

bool SharedVoiceCache::clear_voice(std::string_view voice_name, const std::optional<std::string>& model_type) {
  const std::string name = VoiceCache::normalize_voice_name(voice_name);
  auto matches = [&](const std::string& canonical) {
    try {
      return !model_type || VoiceKey::from_canonical(canonical).model_type == *model_type;
    } catch (const Error&) {
      return !model_type;
    }
  };
  // Every key of the voice, local or shared, is marked removed so that other replicas drop their copies.
  std::vector<std::string> keys;
  for (const VoiceEntry& e : local_->list(name))
    if (!model_type || e.key.model_type == *model_type) keys.push_back(e.key.canonical());
  const bool removed = local_->clear_voice(name, model_type);
  const std::string hkey = hash_key(name);
  bool shared_removed = false;
  if (auto fields = shared_->client().command({"HKEYS", hkey}); fields && fields->type == RedisReply::Type::array) {
    for (const RedisReply& f : fields->elements) {
      if (!matches(f.str)) continue;
      keys.push_back(f.str);
      if (auto r = shared_->client().command({"HDEL", hkey, f.str}); r && r->integer > 0) shared_removed = true;
    }
  }
  for (const std::string& k : keys) shared_->client().command({"SADD", namespace_ + "removed", k});
  if (!keys.empty()) bump_generation();
  return removed || shared_removed;
}

std::vector<VoiceKey> SharedVoiceCache::shared_keys(std::string_view voice_name) {
  std::vector<VoiceKey> out;
  auto fields = shared_->client().command({"HKEYS", hash_key(VoiceCache::normalize_voice_name(voice_name))});
  if (!fields || fields->type != RedisReply::Type::array) return out;
  for (const RedisReply& f : fields->elements) {
    try {
      out.push_back(VoiceKey::from_canonical(f.str));
    } catch (const Error&) {}
  }
  return out;
}

std::vector<VoiceKey> SharedVoiceCache::shared_list() {
  std::vector<VoiceKey> out;
  std::string cursor = "0";
  do {
    auto r = shared_->client().command({"SCAN", cursor, "MATCH", namespace_ + "voice:*", "COUNT", "1000"});
    if (!r || r->type != RedisReply::Type::array || r->elements.size() != 2) break;
    cursor = r->elements[0].str;
    for (const RedisReply& k : r->elements[1].elements) {
      auto fields = shared_->client().command({"HKEYS", k.str});
      if (!fields || fields->type != RedisReply::Type::array) continue;
      for (const RedisReply& f : fields->elements) {
        try {
          out.push_back(VoiceKey::from_canonical(f.str));
        } catch (const Error&) {}
      }
    }
  } while (cursor != "0");
  return out;
}

std::uint64_t SharedVoiceCache::corrupt() const {
  std::lock_guard lock(mutex_);
  return corrupt_;
}

}  // namespace refenc::store
