// The profiler's backend for the real encoders (lib/encoders) with the disk tier (lib/store): the
// adapter that binds lib/profile to the models, kept where the layers are composed (the CLI), so that
// the profile layer links neither the encoders nor the store nor LibTorch.
//
//   auto factory = refenc::profile::encoder_backend_factory();
//   auto backend = factory(manifest.models[0]);     // fish-s2-pro, qwen3-tts, moss-tts-local
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/model_backend.hpp"
#include "store/artifact.hpp"
#include "store/redis_tier.hpp"

namespace refenc::profile {

/// Backends over encoders::make_hook(name, options), or over a Python hook for a model whose
/// encoder names one (python_backend.hpp), with store::DiskTier for warm-disk cells and
/// store::TierChain (the cell's disk folder, then the shared RedisTier) for warm-shared cells.
BackendFactory encoder_backend_factory();

/// The second tier of a profile cell's service: none, the disk tier at `tier_root` (when not empty),
/// and the cell's shared tier after it when `cache.shared_url` is set (warmed up, as a replica's is).
std::shared_ptr<SecondTier<Artifact>> profile_service_tier(const CacheSpec& cache, const std::string& tier_root);

/// Expiry of the values a profile run writes to a shared tier: they live under a prefix of the run's
/// own, which no later run reads, so on a server the run does not own they must not outlive it long.
inline constexpr std::chrono::seconds profile_shared_ttl{3600};

/// The shared tier of a warm-shared cell: cache.shared_url under cache.shared_prefix, with
/// profile_shared_ttl. Throws Error(config) for a URL the store refuses.
std::shared_ptr<store::RedisTier> open_profile_shared_tier(const CacheSpec& cache);

/// Checks, before any cell runs, that a manifest's cache.shared URL parses and, for a server on
/// another host, that a password is set ($REFENC_SHARED_CACHE_PASSWORD); throws Error(bad_input)
/// naming the manifest and the field otherwise.
void validate_shared_cache(const Manifest& manifest);

/// Checks, before any cell runs, that every model of `manifest` names a known encoder with a scale
/// and dtype it has; throws Error(bad_input) naming the manifest and the field otherwise.
void validate_encoder_models(const Manifest& manifest);

/// LibTorch's version, BLAS, intra-op and BLAS threads, the process's malloc and parallel info
/// (torch_info.cpp), for the run context.
LibraryContext torch_library_context();

}  // namespace refenc::profile
