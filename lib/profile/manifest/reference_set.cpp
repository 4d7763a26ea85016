#include "profile/manifest/reference_set.hpp"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "core/error.hpp"

namespace refenc::profile {
namespace {

struct Clip {
  std::vector<float> mono;
  int rate = 0;
};

Clip read_clip(const std::string& path) {
  SF_INFO info{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (!f) throw Error(ErrorKind::bad_input, path + ": cannot read clip: " + sf_strerror(nullptr));
  std::vector<float> inter(static_cast<std::size_t>(info.frames) * static_cast<std::size_t>(info.channels));
  sf_count_t got = sf_readf_float(f, inter.data(), info.frames);
  sf_close(f);
  Clip c;
  c.rate = info.samplerate;
  c.mono.resize(static_cast<std::size_t>(got));
  for (sf_count_t i = 0; i < got; ++i) {
    float s = 0;
    for (int ch = 0; ch < info.channels; ++ch) s += inter[static_cast<std::size_t>(i * info.channels + ch)];
    c.mono[static_cast<std::size_t>(i)] = s / static_cast<float>(info.channels);
  }
  if (c.mono.empty()) throw Error(ErrorKind::bad_input, path + ": clip has no samples");
  return c;
}

void put_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_u16(std::string& s, std::uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}

}  // namespace

std::string wav_bytes(const std::vector<float>& samples, int rate) {
  std::string out;
  auto data_bytes = static_cast<std::uint32_t>(samples.size() * 2);
  out.reserve(44 + data_bytes);
  out += "RIFF";
  put_u32(out, 36 + data_bytes);
  out += "WAVEfmt ";
  put_u32(out, 16);
  put_u16(out, 1);  // PCM
  put_u16(out, 1);  // mono
  put_u32(out, static_cast<std::uint32_t>(rate));
  put_u32(out, static_cast<std::uint32_t>(rate) * 2);
  put_u16(out, 2);
  put_u16(out, 16);
  out += "data";
  put_u32(out, data_bytes);
  for (float f : samples) {
    long v = std::lround(std::clamp(f, -1.0f, 1.0f) * 32767.0f);
    put_u16(out, static_cast<std::uint16_t>(static_cast<std::int16_t>(v)));
  }
  return out;
}

std::vector<ReferenceItem> make_reference_set(const ReferenceSpec& spec, std::uint64_t seed) {
  std::vector<ReferenceItem> out;
  if (spec.clips.empty()) throw Error(ErrorKind::config, "reference set needs at least one clip");
  if (spec.variants == 0) {
    for (const auto& p : spec.clips) {
      SF_INFO info{};
      SNDFILE* f = sf_open(p.c_str(), SFM_READ, &info);
      if (!f) throw Error(ErrorKind::bad_input, p + ": cannot read clip: " + sf_strerror(nullptr));
      sf_close(f);
      out.push_back({std::filesystem::path(p).stem().string(), p, nullptr,
                     static_cast<double>(info.frames) / info.samplerate, info.samplerate});
    }
    return out;
  }
  std::vector<Clip> clips;
  for (const auto& p : spec.clips) clips.push_back(read_clip(p));
  out.reserve(static_cast<std::size_t>(spec.variants));
  for (int i = 0; i < spec.variants; ++i) {
    std::size_t ci = static_cast<std::size_t>(i) % clips.size();
    const Clip& c = clips[ci];
    std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(i));
    double u = static_cast<double>(rng() >> 11) / static_cast<double>(1ULL << 53);  // [0, 1)
    float gain = static_cast<float>(std::pow(10.0, (2 * u - 1) * spec.variant_gain_db / 20.0));
    std::vector<float> s(c.mono.size());
    for (std::size_t k = 0; k < s.size(); ++k) {
      float dither = static_cast<float>(static_cast<int>(rng() % 3) - 1) / 32767.0f;
      s[k] = c.mono[k] * gain * 0.98f + dither;
    }
    ReferenceItem item;
    item.id = std::filesystem::path(spec.clips[ci]).stem().string() + "#" + std::to_string(i);
    item.wav = std::make_shared<const std::string>(wav_bytes(s, c.rate));
    item.seconds = static_cast<double>(s.size()) / c.rate;
    item.sample_rate = c.rate;
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace refenc::profile
