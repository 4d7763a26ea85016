// ModelledNetwork: an encoder network that runs on a modelled device (profile/device/modelled_device.hpp)
// instead of LibTorch. A call costs what the calibration's cost surface says for its batch size and
// longest clip, spent sleeping on the calibration's device, costing no host CPU, and returns artifacts
// of the family's documented shapes and dtypes (values derived from the clip's samples, so equal clips
// give equal artifacts and a batched artifact equals the single encode it replaces).
//
//   auto surface = std::make_shared<refenc::profile::CostSurface>(refenc::profile::resolve_calibration("qwen3-tts-gpu", ""));
//   refenc::profile::ModelledDevice device = refenc::profile::make_modelled_device(surface->calibration());
//   auto hook = refenc::encoders::make_hook_over("qwen3-tts", {.scale = "tiny"},
//                                                refenc::make_modelled_network("qwen3-tts", {.scale = "tiny"}, surface, device), true);
#pragma once

#include <memory>
#include <string_view>

#include "encoders/network.hpp"
#include "profile/device/cost_surface.hpp"
#include "profile/device/modelled_device.hpp"

namespace refenc {

/// The modelled network of family `model_name` (its artifact shapes at `options.scale`) over `surface`
/// and `device`. Throws Error(config) for an unknown family.
std::unique_ptr<encoders::Network> make_modelled_network(std::string_view model_name,
                                                         const encoders::EncoderOptions& options,
                                                         std::shared_ptr<const profile::CostSurface> surface,
                                                         profile::ModelledDevice device);

}  // namespace refenc
