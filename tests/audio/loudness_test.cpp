#include "audio/loudness.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace refenc::audio;

namespace {
std::vector<float> sine(double amplitude, std::size_t n = 48000) {
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(amplitude * std::sin(2 * M_PI * 1000.0 * i / 48000.0));
  return out;
}
double db_of_amplitude(double a) { return 20 * std::log10(a / std::sqrt(2.0)); }
}  // namespace

TEST_CASE("rms_dbfs of known signals", "[loudness]") {
  CHECK(rms_dbfs(sine(1.0)) == Approx(-3.0103).margin(0.01));
  CHECK(rms_dbfs(sine(0.1)) == Approx(-23.0103).margin(0.01));
  CHECK(std::isinf(rms_dbfs(std::vector<float>(100, 0.0f))));
  CHECK(std::isinf(rms_dbfs({})));
}

TEST_CASE("loudness gain reaches the target inside the clamp and stops at it outside", "[loudness]") {
  // -21 dBFS: +1 dB reaches -20.
  auto a = sine(std::sqrt(2.0) * std::pow(10.0, -21.0 / 20));
  CHECK(normalize_loudness(a, -20.0, 3.0) == Approx(1.0).margin(0.01));
  CHECK(rms_dbfs(a) == Approx(-20.0).margin(0.01));
  // -30 dBFS: clamped at +3 dB, ends at -27.
  auto b = sine(std::sqrt(2.0) * std::pow(10.0, -30.0 / 20));
  CHECK(normalize_loudness(b, -20.0, 3.0) == Approx(3.0));
  CHECK(rms_dbfs(b) == Approx(-27.0).margin(0.01));
  // A full-scale sine (-3 dBFS): clamped at -3 dB.
  auto c = sine(1.0);
  CHECK(normalize_loudness(c, -20.0, 3.0) == Approx(-3.0));
  CHECK(rms_dbfs(c) == Approx(db_of_amplitude(1.0) - 3.0).margin(0.01));
  // Silence is left alone.
  std::vector<float> silence(1000, 0.0f);
  CHECK(normalize_loudness(silence, -20.0, 3.0) == 0.0);
  CHECK(loudness_gain_db(-10.0, -20.0, -3.0) == Approx(-3.0));  // the clamp's sign is ignored
}
