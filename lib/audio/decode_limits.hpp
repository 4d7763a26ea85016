// The limits a reference clip must meet before anything decodes or encodes it: length, payload size,
// channel count and sample rate. A violation is Error(bad_input) naming the input.
//
//   audio::DecodeLimits limits{.max_seconds = 30.0};
//   audio::DecodedAudio a = audio::decode_audio(bytes, limits, "clip.wav");   // refuses a 31 s clip
#pragma once

#include <cstddef>

namespace refenc::audio {

/// Limits checked before any decode or encode; a violation is Error(bad_input) naming the input.
struct DecodeLimits {
  double max_seconds = 100.0;                 ///< Longer references are refused (MOSS refuses > 100 s).
  double min_seconds = 0.25;                  ///< Shorter ones carry no usable voice.
  std::size_t max_payload_bytes = 64u << 20;  ///< Encoded file / decoded base64 size.
  int max_channels = 64;
  int max_sample_rate = 384000;
};

}  // namespace refenc::audio
