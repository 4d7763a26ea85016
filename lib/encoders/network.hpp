// Network: the LibTorch side of an encoder behind a LibTorch-free interface, used by the hooks.
//
// Each family builds one from EncoderOptions (a seeded proxy or a TorchScript module). `encode` takes
// one or more clips at the model's rate and returns each clip's tensors, in order.
//
//   std::unique_ptr<Network> net = make_fish_network(options);
//   NetworkItem item{samples};
//   auto out = net->encode(std::span(&item, 1));   // out[0]["codes"]: int64[10, T]
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "encoders/encoder_hook.hpp"

namespace refenc::encoders {

/// One clip handed to a network.
struct NetworkItem {
  std::span<const float> samples;  ///< Mono float32 at the model's rate.
  bool x_vector_only = false;      ///< Qwen3-TTS: skip the speech tokenizer.
};

using NetworkOutput = std::map<std::string, HostTensor>;

class Network {
 public:
  virtual ~Network() = default;
  /// Encodes every item; one output per item, in order. Thread-safe.
  virtual std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) = 0;
  /// Identity of the built network (revision, canonical config, hash, parameter count).
  virtual const EncoderConfig& config() const = 0;
};

/// Parsed device/dtype/scale settings shared by the families (validated, canonical spelling).
struct NetworkSettings {
  std::string scale;
  std::string dtype;
  std::string device;
  std::string module_path;
  std::string checkpoint;  ///< Published checkpoint (file or folder) for the family's real network.
};

/// Validates options (scale among `scales`, dtype, device availability) and applies `threads`;
/// throws Error(config).
NetworkSettings validate_settings(const EncoderOptions& options, const std::vector<std::string>& scales);

std::unique_ptr<Network> make_fish_network(const NetworkSettings& settings);
std::unique_ptr<Network> make_qwen_network(const NetworkSettings& settings);
std::unique_ptr<Network> make_moss_network(const NetworkSettings& settings);

/// The network `make_hook(model_name, options)` would build (validated settings, proxy or module):
/// what `refenc calibrate` times. Throws Error(config) as make_hook does.
std::unique_ptr<Network> make_network(std::string_view model_name, const EncoderOptions& options);

/// The hook of `model_name` over a given `network` (e.g. a modelled device) instead of the family's
/// own; options are not validated against LibTorch (the network's device is its own business).
/// `generic_batching` opts a family without a batch primitive (Qwen3-TTS) into encode_batch over the
/// network; Fish S2-Pro always has it and MOSS-TTS Local keeps its internal batching.
std::shared_ptr<ModelHook> make_hook_over(std::string_view model_name, const EncoderOptions& options,
                                          std::unique_ptr<Network> network, bool generic_batching = false);

/// A TorchScript module called as documented in docs/encoders.md: forward(wave float32[1, 1, N]) returning
/// one tensor (named output_names[0]) or a tuple of tensors (named in order).
std::unique_ptr<Network> make_torchscript_network(const NetworkSettings& settings, const std::string& family,
                                                  std::vector<std::string> output_names);

}  // namespace refenc::encoders
