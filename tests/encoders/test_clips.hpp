// Synthetic reference clips for the encoder tests: deterministic tones plus noise as in-memory WAV.
//
//   auto req = clip_request(44100, 12288, 7);     // 12288 samples at 44.1 kHz, variant 7
//   std::string wav = wav_bytes(samples, 24000);  // 16-bit PCM mono WAV
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "encoders/encoder_hook.hpp"

namespace refenc::encoders::test {

/// Deterministic samples: two tones whose pitch depends on `variant`, plus LCG noise.
inline std::vector<float> clip_samples(int rate, std::int64_t n, int variant) {
  std::vector<float> s(static_cast<std::size_t>(n));
  std::uint32_t state = 12345u + 977u * static_cast<std::uint32_t>(variant);
  const double f1 = 110.0 + 23.0 * variant, f2 = 330.0 + 41.0 * variant;
  for (std::int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double noise = (static_cast<double>(state >> 8) / 16777216.0 - 0.5) * 0.05;
    const double t = static_cast<double>(i) / rate;
    s[static_cast<std::size_t>(i)] =
        static_cast<float>(0.3 * std::sin(2 * M_PI * f1 * t) + 0.2 * std::sin(2 * M_PI * f2 * t) + noise);
  }
  return s;
}

/// 16-bit PCM mono WAV file bytes.
inline std::string wav_bytes(const std::vector<float>& samples, int rate) {
  auto put32 = [](std::string& o, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto put16 = [](std::string& o, std::uint16_t v) {
    o.push_back(static_cast<char>(v & 0xff));
    o.push_back(static_cast<char>(v >> 8));
  };
  const std::uint32_t data = static_cast<std::uint32_t>(samples.size() * 2);
  std::string o = "RIFF";
  put32(o, 36 + data);
  o += "WAVEfmt ";
  put32(o, 16);
  put16(o, 1);
  put16(o, 1);
  put32(o, static_cast<std::uint32_t>(rate));
  put32(o, static_cast<std::uint32_t>(rate) * 2);
  put16(o, 2);
  put16(o, 16);
  o += "data";
  put32(o, data);
  for (float x : samples) {
    const double c = std::max(-1.0, std::min(1.0, static_cast<double>(x)));
    put16(o, static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(c * 32767.0))));
  }
  return o;
}

/// A request for an in-memory WAV clip of `n` samples at `rate`.
inline EncodeRequest clip_request(int rate, std::int64_t n, int variant, std::string text = {}) {
  return {audio::ReferenceSource::from_bytes(wav_bytes(clip_samples(rate, n, variant), rate)), std::move(text)};
}

/// Options for the smallest proxies.
inline EncoderOptions tiny() { return EncoderOptions{}; }

}  // namespace refenc::encoders::test
