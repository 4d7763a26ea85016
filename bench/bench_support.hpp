// Helpers shared by the benchmark programs: comma lists and a synthetic speech-like clip.
//
//   std::vector<std::string> scales = bench::split_list("tiny,small");
//   std::string bytes = bench::speech_wav(44100, 441000, /*variant=*/1);   // 10 s, 16-bit mono WAV
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace refenc::bench {

/// "a,b,,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// `n` samples of 16-bit mono WAV at `rate`: a gliding voiced tone with a harmonic and a little
/// seeded noise; each `variant` has its own pitch and noise, so its own content key.
inline std::string speech_wav(int rate, std::int64_t n, int variant) {
  std::string o = "RIFF";
  auto put = [&o](std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) o.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(36 + static_cast<std::uint32_t>(n) * 2, 4);
  o += "WAVEfmt ";
  put(16, 4), put(1, 2), put(1, 2), put(static_cast<std::uint32_t>(rate), 4),
      put(static_cast<std::uint32_t>(rate) * 2, 4);
  put(2, 2), put(16, 2);
  o += "data";
  put(static_cast<std::uint32_t>(n) * 2, 4);
  std::uint32_t state = 99u + 31u * static_cast<std::uint32_t>(variant);
  for (std::int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double t = static_cast<double>(i) / rate;
    const double f = 120.0 + 17.0 * variant + 40.0 * std::sin(2 * M_PI * 0.5 * t);
    double x = 0.3 * std::sin(2 * M_PI * f * t) + 0.1 * std::sin(2 * M_PI * 3 * f * t) +
               0.03 * (static_cast<double>(state >> 8) / 16777216.0 - 0.5);
    put(static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lround(x * 32767.0))), 2);
  }
  return o;
}

}  // namespace refenc::bench
