// The profiler's backend over a user's own Python hook: a manifest encoder {"python": "module:factory"}
// runs the hook that factory returns (sglang-omni's ReferenceEncodeHook API, docs/python.md) inside
// refenc's harness, in a Python interpreter embedded in this process.
//
// refenc's C++ service does the mechanics (single-flight, LRU, batching, the disk and shared tiers);
// the hook is called, with the GIL taken for the call only, for normalize_input, cache_key,
// encode_one / encode_batch, store_artifact and revalidate. Its stored artifact (a tensor, or a dict
// of tensors and strings) becomes refenc's Artifact, so the tiers keep it as they keep the C++
// encoders'. Each request reaches normalize_input as {"reference_id", "path", "audio", "text"}.
//
//   ModelSpec spec;                        // from a manifest:
//   spec.encoder.python = "torchscript_hook:make_hook";
//   spec.encoder.python_path = {"/src/refenc/python/examples"};
//   spec.encoder.python_args = R"({"module": "fish.pt"})";
//   auto backend = make_python_backend(spec);      // Error(config) if the hook cannot be made
#pragma once

#include <memory>

#include "profile/manifest/manifest.hpp"
#include "profile/orchestration/model_backend.hpp"

namespace refenc::profile {

/// True when this refenc embeds Python (built with REFENC_PYTHON); without it, make_python_backend
/// throws.
bool python_hooks_available();

/// The backend of `spec`, whose encoder.python names the hook's factory. Starts the interpreter on
/// first use. Throws Error(config) naming the model and the reason when the module, the factory or
/// the hook's methods are missing, or the factory raises.
std::unique_ptr<ModelBackend> make_python_backend(const ModelSpec& spec);

}  // namespace refenc::profile
