// Qwen3-TTS hook: the voice-clone prompt (ref_code, ref_spk_embedding, ref_text, mode). M4a only:
// it keeps the default can_encode_batch() == false and encodes one clip at a time.
//
// The reference text (verbatim) and the x-vector-only flag change the prompt, so both enter
// options_key as the SHA-256 of {"ref_text":...,"x_vector_only":...}.
#include <nlohmann/json.hpp>

#include "core/sha256.hpp"
#include "encoders/network_hook.hpp"

namespace refenc::encoders {

namespace {

class QwenHook final : public NetworkHook {
 public:
  explicit QwenHook(const EncoderOptions& o)
      : NetworkHook(model_info("qwen3-tts"), o,
                    make_qwen_network(validate_settings(o, model_info("qwen3-tts").scales))) {}

 protected:
  std::string options_key(const EncodeInput& in) const override {
    nlohmann::json j = {{"ref_text", in.text}, {"x_vector_only", in.x_vector_only}};
    return sha256_hex(j.dump());
  }
  void annotate(Artifact& a, const EncodeInput& in) const override {
    a.meta["ref_text"] = in.text;
    a.meta["x_vector_only"] = in.x_vector_only ? "true" : "false";
  }
};

}  // namespace

std::shared_ptr<ModelHook> make_qwen_hook(const EncoderOptions& options) { return std::make_shared<QwenHook>(options); }

}  // namespace refenc::encoders
