// Built when lib/encoders or lib/store is absent: profiling real encoders is unavailable.
#include "core/error.hpp"
#include "profile/encoder_backend.hpp"

namespace refenc::profile {

bool encoder_backends_available() noexcept { return false; }

BackendFactory encoder_backend_factory() {
  return [](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    throw Error(ErrorKind::config, "model '" + spec.name +
                                       "': this build has no encoders (configure with REFENC_LAYERS including "
                                       "audio;store;encoders;profile)");
  };
}

void validate_encoder_models(const Manifest&) {}

}  // namespace refenc::profile
