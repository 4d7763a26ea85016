// ModelledNetwork: an encoder network that runs on a modelled device instead of LibTorch. A call costs
// what the calibration's cost surface says for its batch size and longest clip, spent sleeping on the
// calibration's device (a DeviceQueue: first come first served per stream; or a SharedDevice: calls
// share it by the measured capacity curve, or by the measured slowdown per length when the calibration
// has one), costing no host CPU, and returns artifacts of the family's
// documented shapes and dtypes (values derived from the clip's samples, so equal clips give equal
// artifacts and a batched artifact equals the single encode it replaces).
//
//   auto surface = std::make_shared<refenc::profile::CostSurface>(refenc::profile::resolve_calibration("qwen3-tts-gpu", ""));
//   refenc::ModelledDevice device = refenc::make_modelled_device(surface->calibration());
//   auto hook = refenc::encoders::make_hook_over("qwen3-tts", {.scale = "tiny"},
//                                                refenc::make_modelled_network("qwen3-tts", {.scale = "tiny"}, surface, device), true);
#pragma once

#include <memory>
#include <string_view>

#include "encoders/network.hpp"
#include "profile/run/cost_surface.hpp"
#include "profile/run/device_queue.hpp"
#include "profile/run/shared_device.hpp"

namespace refenc {

/// Where a modelled call's time is spent: exactly one of the two is set.
struct ModelledDevice {
  std::shared_ptr<profile::DeviceQueue> queue;    ///< FCFS over streams; a call lasts device_seconds.
  std::shared_ptr<profile::SharedDevice> shared;  ///< Shared; a call is call_seconds of work at its longest length.
  /// Calls the device runs at once for M4b's matched batch workers: the streams, or the calibrating
  /// host's cores for a shared device (at least 1).
  int parallel = 1;
};

/// The device a calibration describes: shared when it has a capacity curve or a slowdown table, else
/// its streams.
ModelledDevice make_modelled_device(const profile::Calibration& calibration);

/// The modelled network of family `model_name` (its artifact shapes at `options.scale`) over `surface`
/// and `device`. Throws Error(config) for an unknown family.
std::unique_ptr<encoders::Network> make_modelled_network(std::string_view model_name,
                                                         const encoders::EncoderOptions& options,
                                                         std::shared_ptr<const profile::CostSurface> surface,
                                                         ModelledDevice device);

}  // namespace refenc
