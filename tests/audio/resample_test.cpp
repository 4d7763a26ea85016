#include "audio/polyphase_resampler.hpp"
#include "audio/resample.hpp"
#include "core/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <thread>
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

namespace {

/// The polyphase filter's output k computed directly, in double: the Kaiser-windowed sinc the filter
/// bank is built from (beta 14, 48 zero crossings, cutoff 0.91 x the lower Nyquist), normalised to unit
/// DC gain, centred at input time k * from / to, zero outside the input.
double reference_output(const std::vector<float>& x, int from, int to, std::int64_t k) {
  const int g = std::gcd(from, to), up = to / g, down = from / g;
  const double scale = std::min(1.0, double(up) / down) * 0.91, reach = 48 / scale;
  const int half = static_cast<int>(std::ceil(reach));
  auto i0 = [](double v) {
    double sum = 1, term = 1;
    for (int i = 1; i < 40; ++i) {
      term *= (v / (2 * i)) * (v / (2 * i));
      sum += term;
    }
    return sum;
  };
  const std::int64_t base = k * down / up;
  const double frac = double(k * down % up) / up;
  double acc = 0, weights = 0;
  for (int j = 0; j < 2 * half; ++j) {
    const double t = frac + half - 1 - j, r = t / reach;
    if (std::abs(r) >= 1) continue;
    const double u = M_PI * scale * t;
    const double h = (std::abs(u) < 1e-12 ? 1.0 : std::sin(u) / u) * i0(14 * std::sqrt(1 - r * r));
    const std::int64_t at = base + j - (half - 1);
    if (at >= 0 && at < std::int64_t(x.size())) acc += h * x[std::size_t(at)];
    weights += h;
  }
  return acc / weights;
}

std::vector<float> noise(std::size_t n, unsigned seed) {
  std::vector<float> x(n);
  std::uint32_t s = seed * 2654435761u + 1;
  for (auto& v : x) {
    s = s * 1664525u + 1013904223u;
    v = float(int(s >> 8) - (1 << 23)) / float(1 << 23) * 0.9f;
  }
  return x;
}

}  // namespace

TEST_CASE("polyphase matches the filter computed directly, at both ends and in between", "[resample]") {
  struct Pair {
    int from, to;
  };
  // 2:1, 3:1 and 4:1 decimation (one phase, 2-4 input branches), 160:147 and 147:80 (many phases and
  // branches), integer upsampling (3 phases, one branch) and 2:3.
  for (const Pair p : {Pair{48000, 24000}, Pair{48000, 16000}, Pair{96000, 24000}, Pair{48000, 44100},
                       Pair{44100, 24000}, Pair{8000, 24000}, Pair{16000, 24000}}) {
    for (std::size_t n : {1u, 2u, 3u, 7u, 257u, 4097u, 30011u}) {
      const auto x = noise(n, unsigned(n + p.from));
      const auto y = resample_polyphase(x, p.from, p.to);
      REQUIRE(y);
      REQUIRE(y->size() == resampled_length(n, p.from, p.to));
      INFO(p.from << " -> " << p.to << ", " << n << " frames");
      double worst = 0;
      const std::int64_t count = std::int64_t(y->size());
      for (std::int64_t k = 0; k < count; k += (k < 300 || k + 300 > count) ? 1 : 37)
        worst = std::max(worst, std::abs((*y)[std::size_t(k)] - reference_output(x, p.from, p.to, k)));
      CHECK(worst < 2e-6);
    }
  }
}

TEST_CASE("polyphase kernels agree and each reaches ~140 dB", "[resample]") {
  const auto x = tone(1000, 48000, 48000);
  const auto automatic = *resample_polyphase(x, 48000, 24000);
  for (auto kernel : {PolyphaseKernel::avx512, PolyphaseKernel::avx2, PolyphaseKernel::baseline}) {
    for (int to : {24000, 44100}) {
      const auto y = resample_polyphase(x, 48000, to, kernel);
      REQUIRE(y);
      INFO("kernel " << int(kernel) << ", 48000 -> " << to);
      CHECK(snr_db(*y, 1000, to) > 140);
      if (to == 24000) {
        double worst = 0;
        for (std::size_t i = 0; i < y->size(); ++i) worst = std::max(worst, double(std::abs((*y)[i] - automatic[i])));
        CHECK(worst < 1e-6);
      }
    }
  }
}

TEST_CASE("a polyphase stream gives exactly the one-shot result, whatever the pieces", "[resample]") {
  struct Pair {
    int from, to;
  };
  std::uint32_t s = 12345;
  auto next = [&](std::uint32_t bound) {
    s = s * 1664525u + 1013904223u;
    return (s >> 8) % bound;
  };
  for (const Pair p :
       {Pair{48000, 24000}, Pair{48000, 44100}, Pair{44100, 24000}, Pair{16000, 24000}, Pair{22050, 16000}}) {
    for (std::size_t n : {1u, 5u, 4096u, 4097u, 70001u}) {
      const auto x = noise(n, unsigned(n));
      const auto whole = *resample_polyphase(x, p.from, p.to);
      for (std::uint32_t largest : {1u, 3u, 700u, 9000u}) {
        if (largest == 1 && n > 5000) continue;
        auto stream = PolyphaseStream::open(p.from, p.to, largest == 700 ? n : 0);
        REQUIRE(stream);
        for (std::size_t at = 0; at < n;) {
          const std::size_t piece = std::min<std::size_t>(n - at, next(largest + 1));  // empty pieces too
          stream->push(std::span<const float>(x).subspan(at, piece));
          at += piece;
        }
        CHECK(stream->frames() == n);
        INFO(p.from << " -> " << p.to << ", " << n << " frames in pieces of up to " << largest);
        CHECK(stream->finish() == whole);
        // Finished, the stream starts over.
        stream->push(x);
        CHECK(stream->finish() == whole);
      }
    }
  }
  CHECK_FALSE(PolyphaseStream::open(383999, 24000));
  CHECK(PolyphaseStream::open(48000, 24000)->finish().empty());
}

TEST_CASE("polyphase from 8 threads at once, rates mixed: the same results as from one", "[resample]") {
  const int pairs[][2] = {{48000, 24000}, {48000, 44100}, {44100, 24000}, {22050, 16000}, {11025, 24000}};
  const auto x = noise(20000, 5);
  std::vector<std::vector<float>> expected;
  for (const auto& p : pairs) expected.push_back(*resample_polyphase(x, p[0], p[1]));
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::size_t k = std::size_t(t + i) % std::size(pairs);
        if (*resample_polyphase(x, pairs[k][0], pairs[k][1]) != expected[k]) ++mismatches[std::size_t(t)];
      }
    });
  for (auto& th : threads) th.join();
  CHECK(std::accumulate(mismatches.begin(), mismatches.end(), 0) == 0);
}
