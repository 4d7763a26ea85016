// Digest of an artifact's tensors (names, dtypes, shapes, bytes) and of the fixed clip each process
// encodes in the cross-process determinism test.
//
//   std::string d = artifact_digest(service.get_or_encode(req));
#pragma once

#include <string>

#include "core/sha256.hpp"
#include "encoders/encoder_hook.hpp"
#include "test_clips.hpp"

namespace refenc::encoders::test {

inline std::string artifact_digest(const Artifact& a) {
  Sha256 h;
  for (const auto& [name, t] : a.tensors) {
    h.update(name);
    h.update(t.describe());
    h.update(std::span<const std::byte>(t.raw(), t.nbytes()));
  }
  return h.hex_digest();
}

/// The tiny `model`'s artifact digest for variant 3 of a 1.3 s clip at the model's rate.
inline std::string fixed_clip_digest(const std::string& model) {
  auto hook = make_hook(model, EncoderOptions{});
  const int rate = hook->info().sample_rate;
  EncodeInput in = hook->normalize_input(clip_request(rate, rate * 13 / 10, 3, "fixed text"));
  return artifact_digest(hook->encode_one(in));
}

}  // namespace refenc::encoders::test
