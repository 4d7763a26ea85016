// Decoding audio with libsndfile, from memory (virtual I/O) or from a file, to mono float32.
//
//   audio::DecodedAudio a = audio::decode_audio(bytes, limits, "clip.flac");
//   a.samples;        // mono (channels averaged), at a.sample_rate
//   a.channels;       // channel count of the source
//   a.format;         // "WAV", "FLAC", "OGG", "MPEG", ...
//   audio::decode_audio(bytes, limits, "clip.flac", sink);   // the same, samples streamed to a DecodeSink
#pragma once

#include "audio/decode_limits.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace refenc::audio {

struct DecodedAudio {
  std::vector<float> samples;  ///< Mono: the mean of all channels (empty when decoded into a DecodeSink).
  std::size_t frames = 0;      ///< Frames decoded.
  int sample_rate = 0;
  int channels = 0;
  std::string format;     ///< Major format name, e.g. "WAV", "FLAC", "OGG", "MPEG".
  std::string subformat;  ///< Encoding, e.g. "PCM_16", "FLOAT", "VORBIS", "OPUS".
};

/// Decodes an in-memory file. Refuses, naming `what`: empty, oversized or unrecognised data; zero or too
/// many channels; a zero or too high sample rate; a header announcing more than max_seconds (checked
/// before allocating); more than max_seconds actually decoded (read in bounded chunks); fewer than
/// min_seconds; non-finite samples or magnitudes over 1e6 times full scale; truncated data libsndfile
/// reports as an error.
DecodedAudio decode_audio(std::string_view bytes, const DecodeLimits& limits, std::string_view what);

/// Receives a clip as it is decoded, so that it can be processed (resampled) without being kept whole.
class DecodeSink {
 public:
  virtual ~DecodeSink() = default;
  /// Once, after the header passed its checks and before any samples: the source rate, and the frame
  /// count the header announces, capped by the limits (0 when unknown).
  virtual void start(int sample_rate, std::size_t frames_hint) = 0;
  /// Mono frames (the mean of all channels) in order, at most 4096 a call.
  virtual void samples(std::span<const float> mono) = 0;
};

/// decode_audio handing the mono samples to `sink` chunk by chunk instead of keeping them (the result's
/// `samples` stays empty). The same checks and refusals, possibly after `sink` got some samples.
DecodedAudio decode_audio(std::string_view bytes, const DecodeLimits& limits, std::string_view what, DecodeSink& sink);

/// Reads `path` (size checked first, see read_reference_file) and decodes it.
DecodedAudio decode_audio_file(const std::string& path, const DecodeLimits& limits);

/// Major format names libsndfile can read from this build ("WAV", "FLAC", "OGG", "MPEG", ...).
std::vector<std::string> readable_formats();

}  // namespace refenc::audio
