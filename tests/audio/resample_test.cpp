#include "audio/polyphase_resampler.hpp"
#include "audio/resample.hpp"
#include "core/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace refenc;
using namespace refenc::audio;

namespace {

std::vector<float> tone(double freq, int rate, std::size_t n) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(0.5 * std::sin(2 * M_PI * freq * double(i) / rate));
  return out;
}

/// SNR in dB of `y` against the ideal resampling of the same tone, edges (filter warm-up) excluded.
double snr_db(const std::vector<float>& y, double freq, int rate) {
  const std::size_t edge = static_cast<std::size_t>(rate / 50);
  double signal = 0, noise = 0;
  for (std::size_t i = edge; i + edge < y.size(); ++i) {
    const double ideal = 0.5 * std::sin(2 * M_PI * freq * double(i) / rate);
    signal += ideal * ideal;
    noise += (y[i] - ideal) * (y[i] - ideal);
  }
  return 10 * std::log10(signal / std::max(noise, 1e-30));
}

}  // namespace

TEST_CASE("resampled length is round(n * to / from) for every rate pair", "[resample]") {
  for (int from : {8000, 11025, 16000, 22050, 44100, 48000, 96000}) {
    for (int to : {16000, 24000, 44100}) {
      for (std::size_t n : {1u, 2u, 999u, 12345u}) {
        for (auto q : {ResampleQuality::fastest, ResampleQuality::polyphase}) {
          const auto y = resample(tone(440, from, n), from, to, q);
          INFO(from << " -> " << to << ", " << n << " frames, " << to_string(q));
          CHECK(y.size() == resampled_length(n, from, to));
          CHECK(std::abs(double(y.size()) - double(n) * to / from) <= 0.5);
        }
      }
    }
  }
}

TEST_CASE("equal rates copy; impossible ratios are refused", "[resample]") {
  const auto x = tone(440, 16000, 1000);
  CHECK(resample(x, 16000, 16000, ResampleQuality::best) == x);
  CHECK(resample({}, 16000, 24000, ResampleQuality::best).empty());
  CHECK_THROWS_WITH(resample(x, 10, 24000, ResampleQuality::best, "clip.wav"),
                    Catch::Contains("clip.wav: cannot resample 10 Hz to 24000 Hz"));
  CHECK_THROWS_AS(resample(x, 0, 24000, ResampleQuality::best), Error);
}

TEST_CASE("sinc converters are far closer to the ideal than the simple ones", "[resample]") {
  const auto x = tone(1000, 48000, 48000);
  const double best = snr_db(resample(x, 48000, 44100, ResampleQuality::best), 1000, 44100);
  const double medium = snr_db(resample(x, 48000, 44100, ResampleQuality::medium), 1000, 44100);
  const double fastest = snr_db(resample(x, 48000, 44100, ResampleQuality::fastest), 1000, 44100);
  const double linear = snr_db(resample(x, 48000, 44100, ResampleQuality::linear), 1000, 44100);
  const double zoh = snr_db(resample(x, 48000, 44100, ResampleQuality::zero_order_hold), 1000, 44100);
  const double polyphase = snr_db(resample(x, 48000, 44100, ResampleQuality::polyphase), 1000, 44100);
  CHECK(polyphase > 130);
  CHECK(best > 90);
  CHECK(medium > 80);
  CHECK(fastest > 60);
  CHECK(best >= medium);
  CHECK(fastest > linear);
  CHECK(linear > zoh);
}

TEST_CASE("quality names round-trip", "[resample]") {
  for (auto q : {ResampleQuality::best, ResampleQuality::medium, ResampleQuality::fastest,
                 ResampleQuality::zero_order_hold, ResampleQuality::linear, ResampleQuality::polyphase})
    CHECK(parse_resample_quality(to_string(q)) == q);
  CHECK_THROWS_WITH(parse_resample_quality("ultra"), Catch::Contains("unknown"));
}

TEST_CASE("polyphase: ~140 dB on tones up to 0.8 x Nyquist, no aliasing, fallback on exotic ratios", "[resample]") {
  struct Pair {
    int from, to;
  };
  for (const Pair p : {Pair{48000, 44100}, Pair{48000, 24000}, Pair{44100, 24000}, Pair{16000, 24000},
                       Pair{8000, 24000}, Pair{96000, 24000}, Pair{22050, 16000}}) {
    for (double f : {200.0, 3000.0, 0.4 * std::min(p.from, p.to)}) {
      const auto y = resample_polyphase(tone(f, p.from, std::size_t(p.from)), p.from, p.to);
      REQUIRE(y);
      INFO(p.from << " -> " << p.to << " at " << f << " Hz");
      CHECK(snr_db(*y, f, p.to) > 130);
    }
  }
  // A 13 kHz tone has no place at 24 kHz: it must vanish, not fold back to 11 kHz.
  const auto folded = resample(tone(13000, 48000, 48000), 48000, 24000, ResampleQuality::polyphase);
  double energy = 0;
  for (std::size_t i = 1000; i + 1000 < folded.size(); ++i) energy += folded[i] * folded[i];
  CHECK(10 * std::log10(energy / double(folded.size() - 2000) / 0.125) < -120);
  // 383999 Hz is prime: 24000 phases, too many for a table; resample() falls back to libsamplerate.
  CHECK_FALSE(resample_polyphase(tone(440, 383999, 1000), 383999, 24000));
  CHECK(resample(tone(440, 383999, 1000), 383999, 24000, ResampleQuality::polyphase).size() ==
        resampled_length(1000, 383999, 24000));
}
