// ReferenceSet: the reference clips a workload sends, with a distinct content key per reference.
//
// With `variants` = N > 0, reference i is clip (i mod clips) with a seeded gain change (uniform within
// +-variant_gain_db) and a +-1 LSB seeded dither, re-encoded as 16-bit WAV bytes in memory: every
// variant has different bytes, hence its own cache key, while costing the same to decode and encode as
// its clip. With N = 0 the clips are sent as paths. Variants are identical for a given seed.
//
//   auto set = refenc::profile::make_reference_set(manifest.references, manifest.seed);
//   const ReferenceItem& r = set[3];   // r.wav (bytes) or r.path, r.seconds, r.id
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "profile/manifest/manifest.hpp"

namespace refenc::profile {

struct ReferenceItem {
  std::string id;                          ///< "clip-name#variant" or the clip name.
  std::string path;                        ///< Set when sent as a path (no variants).
  std::shared_ptr<const std::string> wav;  ///< Set for derived variants: the WAV file's bytes.
  double seconds = 0;                      ///< Duration.
  int sample_rate = 0;                     ///< Rate of the clip as sent.
};

/// Decodes the clips (libsndfile) and derives the references. Throws Error(bad_input) naming a clip
/// that cannot be read.
std::vector<ReferenceItem> make_reference_set(const ReferenceSpec& spec, std::uint64_t seed);

/// 16-bit PCM mono WAV bytes of `samples` (in [-1, 1]) at `rate`.
std::string wav_bytes(const std::vector<float>& samples, int rate);

}  // namespace refenc::profile
