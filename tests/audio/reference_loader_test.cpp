#include "audio/decode.hpp"
#include "audio/loudness.hpp"
#include "audio/polyphase_resampler.hpp"
#include "audio/reference_loader.hpp"
#include "audio/resample.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace refenc;
using namespace refenc::audio;
using namespace refenc::audio::test;

TEST_CASE("load_reference gives mono float32 at the target rate", "[loader]") {
  TempDir dir;
  const std::string path = dir.file("ref.flac");
  const long frames = 48000 * 3 / 2;
  REQUIRE(write_audio(path, SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 48000, 2, frames));
  for (int target : {16000, 24000, 44100, 48000}) {
    for (auto q : {ResampleQuality::best, ResampleQuality::medium, ResampleQuality::fastest,
                   ResampleQuality::zero_order_hold, ResampleQuality::linear, ResampleQuality::polyphase}) {
      LoadOptions opt;
      opt.target_rate = target;
      opt.quality = q;
      const LoadedReference r = load_reference(ReferenceSource::from_path(path), opt);
      INFO(target << " Hz, " << to_string(q));
      CHECK(std::abs(double(r.samples.size()) - double(frames) * target / 48000) <= 1.0);
      CHECK(r.sample_rate == target);
      CHECK(r.source_rate == 48000);
      CHECK(r.source_channels == 2);
      CHECK(r.source_format == "FLAC");
      CHECK(r.seconds() == Approx(1.5).margin(1e-3));
      CHECK(r.description == path);
      CHECK(r.source.value == path);
      CHECK(r.gain_db == 0);
    }
  }
}

TEST_CASE("load_reference normalises loudness on request, within the clamp", "[loader]") {
  TempDir dir;
  const std::string path = dir.file("quiet.wav");
  const auto signal = test_signal(16000, 1, 16000, 0.05f);
  REQUIRE(write_audio(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 1, 16000, &signal));
  LoadOptions opt;
  opt.target_rate = 16000;
  const double level = rms_dbfs(load_reference(ReferenceSource::from_path(path), opt).samples);
  opt.loudness_target_dbfs = -20.0;
  const LoadedReference r = load_reference(ReferenceSource::from_path(path), opt);
  const double expected_gain = std::clamp(-20.0 - level, -3.0, 3.0);
  CHECK(r.gain_db == Approx(expected_gain).margin(1e-6));
  CHECK(rms_dbfs(r.samples) == Approx(level + expected_gain).margin(0.01));
  opt.max_gain_db = 40.0;
  CHECK(rms_dbfs(load_reference(ReferenceSource::from_path(path), opt).samples) == Approx(-20.0).margin(0.01));
}

TEST_CASE("payload sources are not kept in the result; trust_stat reuses the memo", "[loader]") {
  TempDir dir;
  const std::string path = dir.file("ref.wav");
  REQUIRE(write_audio(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, 12000));
  const std::string bytes = read_bytes(path);
  const LoadedReference r = load_reference(ReferenceSource::from_bytes(bytes), {});
  CHECK(r.source.kind == ReferenceSource::Kind::bytes);
  CHECK(r.source.value.empty());
  CHECK(r.description == std::to_string(bytes.size()) + " raw bytes");
  CHECK(r.samples.size() == 12000);
  LoadOptions trusting;
  trusting.trust_stat = true;
  const LoadedReference a = load_reference(ReferenceSource::from_path(path), {});
  const LoadedReference b = load_reference(ReferenceSource::from_path(path), trusting);
  CHECK(a.content_key == r.content_key);
  CHECK(b.content_key == r.content_key);
  CHECK(a.timings.read >= 0);
  CHECK(a.timings.decode >= 0);
}

TEST_CASE("load_reference streams decoding into the polyphase filter: same samples as resampling the decoded clip",
          "[loader]") {
  TempDir dir;
  const long frames = 48000 + 4096 * 3 + 11;
  for (int channels : {1, 2, 3}) {
    for (int format :
         {SF_FORMAT_WAV | SF_FORMAT_PCM_16, SF_FORMAT_FLAC | SF_FORMAT_PCM_24, SF_FORMAT_WAV | SF_FORMAT_FLOAT}) {
      const std::string path = dir.file("stream.audio");
      REQUIRE(write_audio(path, format, 48000, channels, frames));
      const DecodedAudio decoded = decode_audio_file(path, {});
      for (int target : {16000, 24000, 44100}) {
        LoadOptions opt;
        opt.target_rate = target;
        const LoadedReference r = load_reference(ReferenceSource::from_path(path), opt);
        INFO(channels << " channels, format " << std::hex << format << std::dec << ", to " << target);
        CHECK(r.samples == *resample_polyphase(decoded.samples, 48000, target));
        CHECK(r.samples == resample(decoded.samples, 48000, target, ResampleQuality::polyphase));
      }
    }
  }
}
