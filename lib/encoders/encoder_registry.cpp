// The model registry: static descriptions of the three families and make_hook by name.
#include <algorithm>

#include "core/error.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"
#include "encoders/network_hook.hpp"

namespace refenc::encoders {

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> all = [] {
    std::vector<ModelInfo> v;
    ModelInfo fish;
    fish.name = "fish-s2-pro";
    fish.description = "FishAudio S2-Pro codec encoder (modded DAC + RVQ 1x4096 + 9x1024)";
    fish.encoder_id = "modded-dac-rvq";
    fish.artifact_kind = "codes";
    fish.sample_rate = 44100;
    fish.samples_per_frame = 2048;
    fish.frame_rate = 44100.0 / 2048.0;
    fish.artifact = {{"codes", "int64", "[10, T]", "T = ceil(samples / 2048); row 0 in 0..4095, rows 1..9 in 0..1023"}};
    fish.meta_keys = {"model", "model_revision", "scale"};
    fish.can_encode_batch = true;
    fish.scales = {"full", "small", "tiny"};
    v.push_back(fish);

    ModelInfo qwen;
    qwen.name = "qwen3-tts";
    qwen.description = "Qwen3-TTS voice-clone prompt (12.5 Hz speech tokenizer + ECAPA-TDNN speaker encoder)";
    qwen.encoder_id = "tokenizer-12hz+ecapa-tdnn";
    qwen.artifact_kind = "voice_clone_prompt";
    qwen.sample_rate = 24000;
    qwen.samples_per_frame = 1920;
    qwen.frame_rate = 12.5;
    qwen.artifact = {
        {"ref_code", "int64", "[T, 16]", "T = ceil(samples / 1920), values 0..2047; absent with x_vector_only"},
        {"ref_spk_embedding", "float32", "[enc_dim]", "enc_dim 1024 (full), 512 (small), 128 (tiny)"}};
    qwen.meta_keys = {"model", "model_revision", "scale", "ref_text", "x_vector_only"};
    qwen.reads_text = true;
    qwen.scales = {"full", "small", "tiny"};
    v.push_back(qwen);

    ModelInfo moss;
    moss.name = "moss-tts-local";
    moss.description = "MOSS-Audio-Tokenizer v1 encoder (causal patch transformer + residual LFQ)";
    moss.encoder_id = "moss-audio-tokenizer-v1";
    moss.artifact_kind = "codes";
    moss.sample_rate = 24000;
    moss.samples_per_frame = 1920;
    moss.frame_rate = 12.5;
    moss.artifact = {{"codes", "int64", "[T, 32]", "T = floor(samples / 1920), values 0..1023"}};
    moss.partial_frame_coded = false;
    moss.meta_keys = {"model", "model_revision", "scale"};
    moss.has_internal_batching = true;
    moss.loudness_normalised = true;
    moss.scales = {"full", "small", "tiny"};
    v.push_back(moss);
    return v;
  }();
  return all;
}

const ModelInfo& model_info(std::string_view name) {
  for (const ModelInfo& m : models())
    if (m.name == name) return m;
  throw Error(ErrorKind::config,
              "model '" + std::string(name) + "': unknown (known: fish-s2-pro, qwen3-tts, moss-tts-local)");
}

audio::LoadOptions reference_load_options(const ModelInfo& info, audio::LoadOptions base) {
  base.target_rate = info.sample_rate;
  if (info.loudness_normalised) {
    base.loudness_target_dbfs = -20.0;
    base.max_gain_db = 3.0;
  }
  return base;
}

std::shared_ptr<ModelHook> make_hook(std::string_view name, const EncoderOptions& options) {
  const ModelInfo& info = model_info(name);
  if (info.name == "fish-s2-pro") return make_fish_hook(options);
  if (info.name == "qwen3-tts") return make_qwen_hook(options);
  return make_moss_hook(options);
}

std::unique_ptr<Network> make_network(std::string_view name, const EncoderOptions& options) {
  const ModelInfo& info = model_info(name);
  NetworkSettings settings = validate_settings(options, info.scales);
  if (info.name == "fish-s2-pro") return make_fish_network(settings);
  if (info.name == "qwen3-tts") return make_qwen_network(settings);
  return make_moss_network(settings);
}

std::shared_ptr<ModelHook> make_hook_over(std::string_view name, const EncoderOptions& options,
                                          std::unique_ptr<Network> network, bool generic_batching) {
  const ModelInfo& info = model_info(name);
  if (!network) throw Error(ErrorKind::config, info.name + ": make_hook_over needs a network");
  if (info.name == "fish-s2-pro") return make_fish_hook(options, std::move(network));
  if (info.name == "qwen3-tts") return make_qwen_hook(options, std::move(network), generic_batching);
  return make_moss_hook(options, std::move(network));
}

}  // namespace refenc::encoders
