// libFuzzer target: decoding audio from memory (libsndfile virtual I/O), downmix, resample (one-shot
// and streamed from a DecodeSink, which must agree exactly) and loudness. Any input must either decode within the limits or throw refenc::Error(bad_input).
//
//   scripts/fuzz.sh 30        # builds build/fuzz/fuzz_decode and runs it on fuzz/corpus/fuzz_decode
#include "audio/decode.hpp"
#include "audio/loudness.hpp"
#include "audio/polyphase_resampler.hpp"
#include "audio/resample.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string_view>

using namespace refenc;
using namespace refenc::audio;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  DecodeLimits limits;
  limits.max_seconds = 20.0;  // keeps each run short; the checks are the same as at 100 s
  limits.min_seconds = 0.0;
  limits.max_payload_bytes = 1 << 20;
  try {
    DecodedAudio a = decode_audio(std::string_view(reinterpret_cast<const char*>(data), size), limits, "fuzz");
    if (a.channels <= 0 || a.sample_rate <= 0 || a.samples.empty()) std::abort();
    if (double(a.samples.size()) > limits.max_seconds * a.sample_rate) std::abort();
    for (float s : a.samples)
      if (!std::isfinite(s)) std::abort();
    if (a.samples.size() > 48000) a.samples.resize(48000);  // resampling cost is not under test
    for (auto q : {ResampleQuality::polyphase, ResampleQuality::fastest}) {
      const auto y = resample(a.samples, a.sample_rate, 16000, q, "fuzz");
      if (y.size() != resampled_length(a.samples.size(), a.sample_rate, 16000)) std::abort();
    }
    // The same clip decoded again into a polyphase stream, chunk by chunk.
    struct Streamed final : DecodeSink {
      std::optional<PolyphaseStream> stream;
      void start(int rate, std::size_t frames_hint) override {
        stream = PolyphaseStream::open(rate, 16000, frames_hint);
      }
      void samples(std::span<const float> mono) override {
        if (stream && stream->frames() < 48000)
          stream->push(mono.first(std::min<std::size_t>(mono.size(), 48000 - stream->frames())));
      }
    } sink;
    decode_audio(std::string_view(reinterpret_cast<const char*>(data), size), limits, "fuzz", sink);
    if (sink.stream) {
      const auto whole = resample_polyphase(a.samples, a.sample_rate, 16000);
      if (!whole || sink.stream->finish() != *whole) std::abort();
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::bad_input) std::abort();
  }
  return 0;
}
