// The profiler's backend for the real encoders (lib/encoders) with the disk tier (lib/store).
//
// Built only when those layers are part of the build; otherwise the factory throws Error(config)
// saying so. The CLI's `profile` command uses it.
//
//   auto factory = refenc::profile::encoder_backend_factory();
//   auto backend = factory(manifest.models[0]);     // fish-s2-pro, qwen3-tts, moss-tts-local
#pragma once

#include "profile/manifest.hpp"
#include "profile/model_backend.hpp"

namespace refenc::profile {

/// True when this build includes lib/encoders and lib/store.
bool encoder_backends_available() noexcept;

/// Backends over encoders::make_hook(name, options) with store::DiskTier for warm-disk cells.
BackendFactory encoder_backend_factory();

/// Checks, before any cell runs, that every model of `manifest` names a known encoder with a scale
/// and dtype it has; throws Error(bad_input) naming the manifest and the field otherwise.
void validate_encoder_models(const Manifest& manifest);

}  // namespace refenc::profile
