// The context of a profile run: host, CPU model, cores, git revision of the source tree, the manifest's
// path, digest and seed, and the start time. The library versions come from the caller (the profile
// layer does not link LibTorch).
//
//   RunContext ctx = make_context(manifest);
//   ctx.libtorch = library_context();   // e.g. from the CLI's LibTorch probe
#pragma once

#include "profile/record/run_record.hpp"
#include "profile/manifest/manifest.hpp"

namespace refenc::profile {

/// Host, CPU, cores, git revision, manifest digest, seed and start time (UTC) of a run of `manifest`.
RunContext make_context(const Manifest& manifest);

}  // namespace refenc::profile
