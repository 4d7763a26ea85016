// Qwen3-TTS hook: the voice-clone prompt (ref_code, ref_spk_embedding, ref_text, mode). M4a only over
// its own network: can_encode_batch() is false and it encodes one clip at a time; over a given network
// (make_hook_over with generic_batching, e.g. a modelled device) it may batch.
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
  QwenHook(const EncoderOptions& o, std::unique_ptr<Network> net, bool generic_batching)
      : NetworkHook(model_info("qwen3-tts"), o,
                    net ? std::move(net) : make_qwen_network(validate_settings(o, model_info("qwen3-tts").scales))),
        generic_batching_(generic_batching) {}

  /// Only over a given network that batches (make_hook_over): the proxy keeps M4a-only.
  bool can_encode_batch() const override { return generic_batching_; }
  std::vector<Artifact> encode_batch(std::span<const EncodeInput* const> items) override { return encode_items(items); }

 protected:
  std::string options_key(const EncodeInput& in) const override {
    nlohmann::json j = {{"ref_text", in.text}, {"x_vector_only", in.x_vector_only}};
    return sha256_hex(j.dump());
  }
  void annotate(Artifact& a, const EncodeInput& in) const override {
    a.meta["ref_text"] = in.text;
    a.meta["x_vector_only"] = in.x_vector_only ? "true" : "false";
  }

 private:
  bool generic_batching_ = false;
};

}  // namespace

std::shared_ptr<ModelHook> make_qwen_hook(const EncoderOptions& options, std::unique_ptr<Network> network,
                                          bool generic_batching) {
  return std::make_shared<QwenHook>(options, std::move(network), generic_batching);
}

}  // namespace refenc::encoders
