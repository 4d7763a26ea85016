#include "encoders/prompt_form.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>

#include "core/error.hpp"
#include "store/direct_writer.hpp"

namespace refenc::encoders {

const PromptForm& prompt_form(std::string_view model) {
  static const std::map<std::string, PromptForm, std::less<>> forms = {
      {"fish-s2-pro", {".npy", "NumPy int64 [10, T] codes: fish-speech's --prompt-tokens"}},
      {"qwen3-tts",
       {".pt", "torch.save({\"items\": [{ref_code, ref_spk_embedding, x_vector_only_mode, icl_mode, ref_text}]}): "
               "Qwen3-TTS's saved voice-clone prompt"}},
      {"moss-tts-local", {".jsonl", "one JSON line {\"ref_audio_codes\": [T x 32 ints]}: MOSS-TTS's reference codes"}},
  };
  const auto it = forms.find(model);
  if (it == forms.end()) throw Error(ErrorKind::config, "model '" + std::string(model) + "' has no prompt form");
  return it->second;
}

std::string npy_bytes(const HostTensor& t) {
  std::string shape;
  for (std::int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.shape().size() > 1) shape.resize(shape.size() - 2);
  const bool integer = t.dtype() != DType::float32;
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", integer ? "<i8" : "<f4", shape);
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const HostTensor wide = integer ? t.to(DType::int64) : t;
  out.append(reinterpret_cast<const char*>(wide.raw()), wide.nbytes());
  return out;
}

namespace {

std::string meta_of(const Artifact& a, const std::string& key) {
  const auto it = a.meta.find(key);
  return it == a.meta.end() ? std::string() : it->second;
}

/// Qwen3-TTS's VoiceClonePromptItem, as the demo saves it (`dataclasses.asdict`, fields in order).
std::string qwen_prompt(const Artifact& a) {
  const bool x_vector_only = meta_of(a, "x_vector_only") == "true";
  const std::string text = meta_of(a, "ref_text");
  if (!x_vector_only && text.empty())
    throw Error(ErrorKind::bad_input, "a qwen3-tts voice-clone prompt in ICL mode needs the reference text "
                                      "(--text), or use --x-vector-only");
  using store::TorchValue;
  TorchValue::Dict item;
  item.emplace_back("ref_code", x_vector_only ? TorchValue::none() : TorchValue{a.tensor("ref_code").to(DType::int64)});
  item.emplace_back("ref_spk_embedding", TorchValue{a.tensor("ref_spk_embedding")});
  item.emplace_back("x_vector_only_mode", TorchValue{x_vector_only});
  item.emplace_back("icl_mode", TorchValue{!x_vector_only});
  item.emplace_back("ref_text", text.empty() ? TorchValue::none() : TorchValue{text});
  const std::vector<char> zip =
      store::write_torch_archive(TorchValue::dict({{"items", TorchValue::list({TorchValue::dict(std::move(item))})}}));
  return {zip.begin(), zip.end()};
}

/// MOSS-TTS's `"ref_audio_codes": codes.tolist()` record field.
std::string moss_prompt(const Artifact& a) {
  const HostTensor codes = a.tensor("codes").to(DType::int64);
  const auto v = codes.values<std::int64_t>();
  const std::int64_t frames = codes.shape().at(0), width = codes.shape().at(1);
  nlohmann::json rows = nlohmann::json::array();
  for (std::int64_t t = 0; t < frames; ++t)
    rows.push_back(std::vector<std::int64_t>(v.begin() + t * width, v.begin() + (t + 1) * width));
  return nlohmann::json{{"ref_audio_codes", rows}}.dump() + "\n";
}

}  // namespace

std::string prompt_bytes(std::string_view model, const Artifact& artifact) {
  prompt_form(model);  // an unknown model fails here
  if (model == "qwen3-tts") return qwen_prompt(artifact);
  if (model == "moss-tts-local") return moss_prompt(artifact);
  return npy_bytes(artifact.tensor("codes"));
}

}  // namespace refenc::encoders
