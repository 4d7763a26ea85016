// FishAudio S2-Pro hook: codes [10, T]; opts into the generic batching surface (M4b).
//
// encode_batch hands the network the whole batch: on the CPU in float32 it runs each clip alone at its
// own padded length, so each item's codes are exactly its encode_one codes; elsewhere it runs one
// right-padded [B, 1, N] buffer (fish_network.cpp).
#include "encoders/network_hook.hpp"

namespace refenc::encoders {

namespace {

class FishHook final : public NetworkHook {
 public:
  FishHook(const EncoderOptions& o, std::unique_ptr<Network> net)
      : NetworkHook(model_info("fish-s2-pro"), o,
                    net ? std::move(net) : make_fish_network(validate_settings(o, model_info("fish-s2-pro").scales))) {}

  bool can_encode_batch() const override { return true; }
  std::vector<Artifact> encode_batch(std::span<const EncodeInput* const> items) override { return encode_items(items); }
};

}  // namespace

std::shared_ptr<ModelHook> make_fish_hook(const EncoderOptions& options, std::unique_ptr<Network> network) {
  return std::make_shared<FishHook>(options, std::move(network));
}

}  // namespace refenc::encoders
