#include "core/reference_encode_key.hpp"

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

std::size_t hash_value(const ReferenceEncodeKey& k) noexcept {
  std::hash<std::string> h;
  std::size_t seed = 0;
  for (const std::string* s : {&k.model_id, &k.model_revision, &k.encoder_id, &k.encoder_config_hash,
                               &k.artifact_kind, &k.input_key, &k.options_key}) {
    seed ^= h(*s) + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4);
  }
  return seed;
}

}  // namespace refenc
