// Test fixtures for tests/audio: a temporary directory, a speech-like test signal and writers that
// produce every audio format libsndfile can write, so no binary fixture is committed.
//
//   TempDir dir;
//   auto path = dir.file("a.flac");
//   REQUIRE(write_audio(path, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 2, 8000));
#pragma once

#include <sndfile.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace refenc::audio::test {

/// A fresh directory under the system temp dir, removed with its content on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "refenc-audio-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

/// Interleaved speech-like signal: a 140 Hz harmonic series under a 4 Hz syllable envelope, each
/// channel with its own gain (channel c at (c + 1) / channels) so a downmix is checkable.
inline std::vector<float> test_signal(long frames, int channels, int rate, float peak = 0.5f) {
  std::vector<float> out(static_cast<std::size_t>(frames * channels));
  const double two_pi = 6.283185307179586;
  for (long i = 0; i < frames; ++i) {
    const double t = double(i) / rate;
    const double envelope = 0.55 + 0.45 * std::sin(two_pi * 4.0 * t);
    double v = 0;
    for (int h = 1; h <= 6; ++h)
      if (140.0 * h < rate / 2.0) v += std::sin(two_pi * 140.0 * h * t + h) / h;
    v *= peak * envelope / 2.5;
    for (int c = 0; c < channels; ++c)
      out[static_cast<std::size_t>(i * channels + c)] = static_cast<float>(v * (c + 1) / channels);
  }
  return out;
}

/// Writes `frames` frames of test_signal (or `samples` when given) with libsndfile; false when this
/// libsndfile cannot write that format/rate/channel layout.
inline bool write_audio(const std::string& path, int format, int rate, int channels, long frames,
                        const std::vector<float>* samples = nullptr) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  if (!sf_format_check(&info)) return false;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (!f) return false;
  const std::vector<float> signal = samples ? *samples : test_signal(frames, channels, rate);
  const sf_count_t written = sf_writef_float(f, signal.data(), frames);
  sf_close(f);
  return written == frames;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Standard base64 with padding.
inline std::string encode_base64(const std::string& bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], alphabet[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], '='};
  }
  return out;
}

/// A canonical 44-byte PCM WAV header followed by `data_bytes` of zeros (header fields as given).
inline std::string wav_bytes(int channels, int rate, int bits, std::uint32_t declared_data_bytes,
                             std::size_t data_bytes, int format_tag = 1) {
  std::string out;
  auto u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](std::uint32_t v) {
    for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  const std::uint32_t block = static_cast<std::uint32_t>(channels * bits / 8);
  out += "RIFF";
  u32(36 + declared_data_bytes);
  out += "WAVEfmt ";
  u32(16);
  u16(static_cast<std::uint32_t>(format_tag));
  u16(static_cast<std::uint32_t>(channels));
  u32(static_cast<std::uint32_t>(rate));
  u32(static_cast<std::uint32_t>(rate) * block);
  u16(block);
  u16(static_cast<std::uint32_t>(bits));
  out += "data";
  u32(declared_data_bytes);
  out.append(data_bytes, '\0');
  return out;
}

}  // namespace refenc::audio::test
