#include "audio/decode.hpp"
#include "audio/resample.hpp"
#include "core/error.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>
#include <vector>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

namespace {

struct FormatCase {
  const char* name;
  const char* ext;
  int format;
};

const FormatCase formats[] = {
    {"WAV PCM_U8", "wav", SF_FORMAT_WAV | SF_FORMAT_PCM_U8},
    {"WAV PCM_16", "wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16},
    {"WAV PCM_24", "wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24},
    {"WAV PCM_32", "wav", SF_FORMAT_WAV | SF_FORMAT_PCM_32},
    {"WAV FLOAT", "wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT},
    {"WAV ULAW", "wav", SF_FORMAT_WAV | SF_FORMAT_ULAW},
    {"WAV ALAW", "wav", SF_FORMAT_WAV | SF_FORMAT_ALAW},
    {"FLAC 16", "flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16},
    {"FLAC 24", "flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_24},
    {"OGG VORBIS", "ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS},
    {"OGG OPUS", "opus", SF_FORMAT_OGG | SF_FORMAT_OPUS},
    {"MP3", "mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III},
    {"AIFF PCM_16", "aiff", SF_FORMAT_AIFF | SF_FORMAT_PCM_16},
    {"AU PCM_16", "au", SF_FORMAT_AU | SF_FORMAT_PCM_16},
    {"AU ULAW", "au", SF_FORMAT_AU | SF_FORMAT_ULAW},
};

}  // namespace

TEST_CASE("every format, rate and channel count decodes to mono of the right length", "[decode]") {
  TempDir dir;
  const int rates[] = {8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000};
  const int channel_counts[] = {1, 2, 3, 4, 5, 6};
  int decoded = 0, skipped = 0;
  std::string not_writable;
  for (const auto& f : formats) {
    for (int rate : rates) {
      for (int channels : channel_counts) {
        // Every layout for WAV PCM_16; a spread for the others keeps the test fast.
        if (f.format != (SF_FORMAT_WAV | SF_FORMAT_PCM_16) && channels != 1 && channels != 2 && channels != 6) continue;
        const long frames = rate * 3 / 10 + 17;  // 0.3 s and an odd remainder
        const std::string path = dir.file(std::string("x.") + f.ext);
        if (!write_audio(path, f.format, rate, channels, frames)) {
          ++skipped;
          // This libsndfile cannot write that layout (e.g. Opus at 11025 Hz, MP3 in 6 channels).
          not_writable += std::string(" ") + f.name + "@" + std::to_string(rate) + "/" + std::to_string(channels);
          continue;
        }
        INFO(f.name << " " << rate << " Hz " << channels << " ch");
        const std::string bytes = read_bytes(path);
        DecodedAudio a = decode_audio(bytes, {}, path);
        CHECK(a.channels == channels);
        // Lossy codecs included: libsndfile decodes them gaplessly, at the rate written.
        CHECK(a.sample_rate == rate);
        CHECK(a.samples.size() == static_cast<std::size_t>(frames));
        for (int target : {16000, 24000, 44100}) {
          const auto y = resample(a.samples, a.sample_rate, target, ResampleQuality::fastest);
          const double expected = double(a.samples.size()) * target / a.sample_rate;
          CHECK(std::abs(double(y.size()) - expected) <= 1.0);
        }
        ++decoded;
      }
    }
  }
  CHECK(decoded > 150);
  WARN("decoded " << decoded << " layouts; " << skipped << " not writable by this libsndfile:" << not_writable);
}

TEST_CASE("lossless decode matches the samples written, downmixed by averaging", "[decode]") {
  TempDir dir;
  const int rate = 16000;
  const long frames = 8000;
  for (int channels : {1, 2, 3, 6}) {
    const std::string path = dir.file("mix.wav");
    REQUIRE(write_audio(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, rate, channels, frames));
    const auto interleaved = test_signal(frames, channels, rate);
    const DecodedAudio a = decode_audio_file(path, {});
    REQUIRE(a.samples.size() == static_cast<std::size_t>(frames));
    double max_err = 0;
    for (long i = 0; i < frames; ++i) {
      double mean = 0;
      for (int c = 0; c < channels; ++c) mean += interleaved[static_cast<std::size_t>(i * channels + c)];
      mean /= channels;
      max_err = std::max(max_err, std::abs(mean - a.samples[static_cast<std::size_t>(i)]));
    }
    INFO(channels << " channels");
    CHECK(max_err < 1e-6);
    CHECK(a.format == "WAV");
    CHECK(a.subformat == "FLOAT");
  }
}

TEST_CASE("readable formats include the common containers", "[decode]") {
  const auto names = readable_formats();
  for (const char* want : {"WAV", "FLAC", "OGG", "AIFF"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
}

TEST_CASE("16-bit PCM decodes to exactly what libsndfile's float reading gives", "[decode]") {
  TempDir dir;
  const long frames = 3 * 4096 + 77;  // several chunks and a partial one
  for (int channels : {1, 2, 3}) {
    for (int format :
         {SF_FORMAT_WAV | SF_FORMAT_PCM_16, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, SF_FORMAT_AIFF | SF_FORMAT_PCM_16}) {
      const std::string path = dir.file("pcm16");
      REQUIRE(write_audio(path, format, 48000, channels, frames));
      SF_INFO info{};
      SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
      REQUIRE(f);
      std::vector<float> interleaved(static_cast<std::size_t>(frames * channels));
      REQUIRE(sf_readf_float(f, interleaved.data(), frames) == frames);
      sf_close(f);
      const DecodedAudio a = decode_audio_file(path, {});
      REQUIRE(a.samples.size() == static_cast<std::size_t>(frames));
      CHECK(a.subformat == "PCM_16");
      std::size_t differing = 0;
      for (long i = 0; i < frames; ++i) {
        const float* p = interleaved.data() + i * channels;
        float mean;
        if (channels == 1) {
          mean = p[0];
        } else if (channels == 2) {
          mean = (p[0] + p[1]) * 0.5f;
        } else {
          float sum = 0;
          for (int c = 0; c < channels; ++c) sum += p[c];
          mean = sum * (1.0f / float(channels));
        }
        differing += mean != a.samples[static_cast<std::size_t>(i)];
      }
      INFO(channels << " channels, format " << std::hex << format);
      CHECK(differing == 0);
    }
  }
}

TEST_CASE("a decode sink gets the header's rate and length, then every sample in order", "[decode]") {
  TempDir dir;
  const std::string path = dir.file("sink.flac");
  const long frames = 5 * 4096 + 3;
  REQUIRE(write_audio(path, SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 22050, 2, frames));
  struct Recorder final : DecodeSink {
    int rate = 0, starts = 0;
    std::size_t hint = 0, calls = 0, largest = 0;
    std::vector<float> got;
    void start(int sample_rate, std::size_t frames_hint) override {
      CHECK(got.empty());
      rate = sample_rate;
      hint = frames_hint;
      ++starts;
    }
    void samples(std::span<const float> mono) override {
      got.insert(got.end(), mono.begin(), mono.end());
      largest = std::max(largest, mono.size());
      ++calls;
    }
  } sink;
  const std::string bytes = read_bytes(path);
  const DecodedAudio streamed = decode_audio(bytes, {}, path, sink);
  const DecodedAudio kept = decode_audio(bytes, {}, path);
  CHECK(sink.starts == 1);
  CHECK(sink.rate == 22050);
  CHECK(sink.hint == static_cast<std::size_t>(frames));
  CHECK(sink.largest <= 4096);
  CHECK(sink.calls >= 6);
  CHECK(streamed.samples.empty());
  CHECK(streamed.frames == static_cast<std::size_t>(frames));
  CHECK(kept.frames == static_cast<std::size_t>(frames));
  CHECK(sink.got == kept.samples);
  CHECK(streamed.sample_rate == 22050);
  CHECK(streamed.channels == 2);
  CHECK(streamed.format == "FLAC");
}
