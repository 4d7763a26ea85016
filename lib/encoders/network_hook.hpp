// NetworkHook: the ReferenceEncodeHook logic every family shares, over a Network (no LibTorch).
//
// It decodes through lib/audio at the family's rate, keys by every identity part, encodes through
// the network, stores compacted (int16 codes) and hands out widened (int64) caller-owned copies.
// Families override `options_key`, `annotate` and the batching methods.
//
//   class FishHook : public NetworkHook {
//     bool can_encode_batch() const override { return true; }
//   };
#pragma once

#include <memory>
#include <string>

#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"

namespace refenc::encoders {

class NetworkHook : public ModelHook {
 public:
  NetworkHook(const ModelInfo& info, const EncoderOptions& options, std::unique_ptr<Network> network);

  EncodeInput normalize_input(const EncodeRequest& request) override;
  std::optional<ReferenceEncodeKey> cache_key(const EncodeInput& item) override;
  Artifact encode_one(const EncodeInput& item) override;
  Artifact store_artifact(const Artifact& artifact) override { return artifact.compacted(); }
  Artifact load_artifact(const Artifact& stored) override { return stored.widened(); }
  bool revalidate(const EncodeInput& item, const ReferenceEncodeKey&) override {
    return audio::still_current(item.audio);
  }
  std::size_t stored_bytes(const Artifact& stored) const override { return stored.byte_size(); }

  const ModelInfo& info() const override { return info_; }
  const EncoderConfig& config() const override { return network_->config(); }
  const EncoderOptions& options() const override { return options_; }
  LoadSummary last_load() const override;

 protected:
  /// Encode options that change the artifact, as a digest; empty when the model reads none.
  virtual std::string options_key(const EncodeInput&) const { return {}; }
  /// Runs the network on items and wraps each output as an Artifact with its metadata.
  std::vector<Artifact> encode_items(std::span<const EncodeInput* const> items);
  /// Adds family metadata (e.g. ref_text) to an artifact.
  virtual void annotate(Artifact&, const EncodeInput&) const {}

  Network& network() { return *network_; }

 private:
  const ModelInfo& info_;
  EncoderOptions options_;
  std::unique_ptr<Network> network_;
};

/// Family hooks, built by make_hook (network null: the family's own) and make_hook_over.
std::shared_ptr<ModelHook> make_fish_hook(const EncoderOptions& options, std::unique_ptr<Network> network = nullptr);
std::shared_ptr<ModelHook> make_qwen_hook(const EncoderOptions& options, std::unique_ptr<Network> network = nullptr,
                                          bool generic_batching = false);
std::shared_ptr<ModelHook> make_moss_hook(const EncoderOptions& options, std::unique_ptr<Network> network = nullptr);

}  // namespace refenc::encoders
