// MOSS-TTS Local hook: codes (T, 32) from loudness-normalised 24 kHz audio.
//
// Like the reference server, it batches inside its own encode path: encode_one hands the clip to an
// InternalBatcher (up to 8 clips, 4 ms of wait for company), which runs one zero-padded network call
// per batch. It does not opt into the generic batching surface (can_encode_batch() stays false).
#include "encoders/moss_tts_local/internal_batcher.hpp"
#include "encoders/network_hook.hpp"

namespace refenc::encoders {

namespace {

constexpr std::size_t kMaxInternalBatch = 8;
constexpr std::chrono::microseconds kInternalWait{4000};

class MossHook final : public NetworkHook {
 public:
  MossHook(const EncoderOptions& o, std::unique_ptr<Network> net)
      : NetworkHook(
            model_info("moss-tts-local"), o,
            net ? std::move(net) : make_moss_network(validate_settings(o, model_info("moss-tts-local").scales))),
        batcher_(kMaxInternalBatch, kInternalWait,
                 [this](std::span<const EncodeInput* const> items) { return encode_items(items); }) {}

  Artifact encode_one(const EncodeInput& item) override { return batcher_.run(item); }

  InternalBatchStats internal_batch_stats() const override {
    return {batcher_.batches(), batcher_.items(), batcher_.largest()};
  }

 private:
  InternalBatcher<EncodeInput, Artifact> batcher_;
};

}  // namespace

std::shared_ptr<ModelHook> make_moss_hook(const EncoderOptions& options, std::unique_ptr<Network> network) {
  return std::make_shared<MossHook>(options, std::move(network));
}

}  // namespace refenc::encoders
