// The profiler's backend for the real encoders (lib/encoders) with the disk tier (lib/store): the
// adapter that binds lib/profile to the models, kept where the layers are composed (the CLI), so that
// the profile layer links neither the encoders nor the store nor LibTorch.
//
//   auto factory = refenc::profile::encoder_backend_factory();
//   auto backend = factory(manifest.models[0]);     // fish-s2-pro, qwen3-tts, moss-tts-local
#pragma once

#include "profile/record/run_record.hpp"
#include "profile/run/manifest.hpp"
#include "profile/run/model_backend.hpp"

namespace refenc::profile {

/// Backends over encoders::make_hook(name, options) with store::DiskTier for warm-disk cells.
BackendFactory encoder_backend_factory();

/// Checks, before any cell runs, that every model of `manifest` names a known encoder with a scale
/// and dtype it has; throws Error(bad_input) naming the manifest and the field otherwise.
void validate_encoder_models(const Manifest& manifest);

/// LibTorch's version, BLAS, intra-op threads and parallel info (torch_info.cpp), for the run context.
LibraryContext torch_library_context();

}  // namespace refenc::profile
