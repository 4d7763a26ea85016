#include "audio/decode.hpp"

#include "audio/local_file.hpp"
#include "core/error.hpp"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

namespace refenc::audio {
namespace {

struct MemoryFile {
  const char* data;
  sf_count_t size;
  sf_count_t pos = 0;
};

sf_count_t mem_length(void* user) { return static_cast<MemoryFile*>(user)->size; }

sf_count_t mem_seek(sf_count_t offset, int whence, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  sf_count_t base = 0;
  if (whence == SEEK_CUR)
    base = f->pos;
  else if (whence == SEEK_END)
    base = f->size;
  else if (whence != SEEK_SET)
    return -1;
  // Saturating add: a garbage header can ask for any offset.
  sf_count_t target;
  if (__builtin_add_overflow(base, offset, &target) || target < 0) return -1;
  f->pos = std::min(target, f->size);
  return f->pos;
}

sf_count_t mem_read(void* ptr, sf_count_t count, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  if (count <= 0) return 0;
  const sf_count_t n = std::min(count, f->size - f->pos);
  if (n <= 0) return 0;
  std::memcpy(ptr, f->data + f->pos, static_cast<std::size_t>(n));
  f->pos += n;
  return n;
}

sf_count_t mem_write(const void*, sf_count_t, void*) { return 0; }

sf_count_t mem_tell(void* user) { return static_cast<MemoryFile*>(user)->pos; }

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};

[[noreturn]] void refuse(std::string_view what, const std::string& reason) {
  throw Error(ErrorKind::bad_input, std::string(what) + ": " + reason);
}

std::string format_name(int format, int command) {
  SF_FORMAT_INFO info{};
  info.format = format;
  if (sf_command(nullptr, command, &info, sizeof info) == 0 && info.name) {
    std::string name = info.name;
    // "WAV (Microsoft)" -> "WAV"; "Signed 16 bit PCM" is left as is.
    if (command == SFC_GET_FORMAT_INFO && name.find(' ') != std::string::npos) name.resize(name.find(' '));
    return name;
  }
  return "unknown";
}

std::string subformat_tag(int sub) {
  switch (sub) {
    case SF_FORMAT_PCM_S8: return "PCM_S8";
    case SF_FORMAT_PCM_U8: return "PCM_U8";
    case SF_FORMAT_PCM_16: return "PCM_16";
    case SF_FORMAT_PCM_24: return "PCM_24";
    case SF_FORMAT_PCM_32: return "PCM_32";
    case SF_FORMAT_FLOAT: return "FLOAT";
    case SF_FORMAT_DOUBLE: return "DOUBLE";
    case SF_FORMAT_ULAW: return "ULAW";
    case SF_FORMAT_ALAW: return "ALAW";
    case SF_FORMAT_VORBIS: return "VORBIS";
#ifdef SF_FORMAT_OPUS
    case SF_FORMAT_OPUS: return "OPUS";
#endif
#ifdef SF_FORMAT_MPEG_LAYER_III
    case SF_FORMAT_MPEG_LAYER_I: return "MPEG_LAYER_I";
    case SF_FORMAT_MPEG_LAYER_II: return "MPEG_LAYER_II";
    case SF_FORMAT_MPEG_LAYER_III: return "MPEG_LAYER_III";
#endif
    default: return format_name(sub, SFC_GET_FORMAT_INFO);
  }
}

/// Floating-point files may exceed full scale, but not by this much: such values are garbage and would
/// overflow resampling or loudness gain.
constexpr float max_magnitude = 1e6f;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

}  // namespace

DecodedAudio decode_audio(std::string_view bytes, const DecodeLimits& limits, std::string_view what, DecodeSink& sink) {
  if (!(limits.max_seconds > 0) || !(limits.min_seconds >= 0) || limits.max_channels <= 0 ||
      limits.max_sample_rate <= 0)
    throw Error(ErrorKind::config, std::string(what) + ": invalid decode limits (max_seconds " +
                                       std::to_string(limits.max_seconds) + ", min_seconds " +
                                       std::to_string(limits.min_seconds) + ")");
  if (bytes.empty()) refuse(what, "empty input");
  if (bytes.size() > limits.max_payload_bytes)
    refuse(what, "payload too large (" + std::to_string(bytes.size()) + " bytes > " +
                     std::to_string(limits.max_payload_bytes) + " byte limit)");
  MemoryFile mem{bytes.data(), static_cast<sf_count_t>(bytes.size())};
  SF_VIRTUAL_IO io{mem_length, mem_seek, mem_read, mem_write, mem_tell};
  SF_INFO info{};
  std::unique_ptr<SNDFILE, SndfileCloser> file;
  std::string reason;
  {
    // libsndfile reports a failed open through process-wide state: serialise opens (cheap: headers
    // only) so concurrent loads neither race on it nor read each other's message.
    static std::mutex open_mutex;
    std::lock_guard lock(open_mutex);
    file.reset(sf_open_virtual(&io, SFM_READ, &info, &mem));
    if (!file) reason = sf_strerror(nullptr);
  }
  if (!file) {
    const auto head = bytes.substr(0, 512);
    const bool looks_like_text = std::all_of(head.begin(), head.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return u == '\n' || u == '\r' || u == '\t' || u >= 0x20;  // printable ASCII or UTF-8
    });
    if (looks_like_text) refuse(what, "not an audio file (looks like text; libsndfile: " + reason + ")");
    refuse(what, "not a readable audio file (libsndfile: " + reason + ")");
  }
  if (info.channels <= 0) refuse(what, "header declares " + std::to_string(info.channels) + " channels");
  if (info.channels > limits.max_channels)
    refuse(what,
           "too many channels (" + std::to_string(info.channels) + " > " + std::to_string(limits.max_channels) + ")");
  if (info.samplerate <= 0) refuse(what, "header declares a sample rate of " + std::to_string(info.samplerate) + " Hz");
  if (info.samplerate > limits.max_sample_rate)
    refuse(what, "sample rate too high (" + std::to_string(info.samplerate) + " Hz > " +
                     std::to_string(limits.max_sample_rate) + " Hz)");

  const double rate = info.samplerate;
  // Frames beyond this are refused; never allocate more than it, whatever the header says.
  const auto max_frames = static_cast<sf_count_t>(std::min(std::floor(limits.max_seconds * rate), 4e18));
  if (info.frames > 0 && info.frames != SF_COUNT_MAX && info.frames > max_frames)
    refuse(what, "too long (" + seconds_text(double(info.frames) / rate) + " > " + seconds_text(limits.max_seconds) +
                     " maximum)");

  DecodedAudio out;
  out.sample_rate = info.samplerate;
  out.channels = info.channels;
  out.format = format_name(info.format & SF_FORMAT_TYPEMASK, SFC_GET_FORMAT_INFO);
  out.subformat = subformat_tag(info.format & SF_FORMAT_SUBMASK);
  const sf_count_t announced = info.frames > 0 && info.frames != SF_COUNT_MAX
                                   ? std::min({info.frames, max_frames, static_cast<sf_count_t>(8 * bytes.size())})
                                   : 0;
  sink.start(info.samplerate, static_cast<std::size_t>(announced));

  const int channels = info.channels;
  // 16-bit PCM is read as integers and scaled here, exactly as libsndfile would (x / 32768): no
  // float conversion inside libsndfile and no range check (integers are always in range).
  const bool pcm16 = (info.format & SF_FORMAT_SUBMASK) == SF_FORMAT_PCM_16;
  constexpr sf_count_t chunk_frames = 4096;
  std::vector<float> chunk(static_cast<std::size_t>(chunk_frames * channels));
  std::vector<short> ints(pcm16 ? chunk.size() : 0);
  std::vector<float> mono(static_cast<std::size_t>(chunk_frames));
  const float scale = 1.0f / static_cast<float>(channels);
  std::size_t frames = 0;
  while (true) {
    const sf_count_t n = pcm16 ? sf_readf_short(file.get(), ints.data(), chunk_frames)
                               : sf_readf_float(file.get(), chunk.data(), chunk_frames);
    if (n <= 0) break;
    if (static_cast<sf_count_t>(frames) + n > max_frames)
      refuse(what, "too long (more than " + seconds_text(limits.max_seconds) + " of audio)");
    const float* p = chunk.data();
    const auto values = static_cast<std::size_t>(n) * static_cast<std::size_t>(channels);
    if (pcm16 && channels == 2) {
      // (a / 32768 + b / 32768) * 0.5 == (a + b) * (0.5 / 32768) exactly: every step is exact in float.
      const short* s = ints.data();
      float* dst = mono.data();
      for (sf_count_t i = 0; i < n; ++i)
        dst[i] = (static_cast<float>(s[2 * i]) + static_cast<float>(s[2 * i + 1])) * (0.5f / 32768.0f);
      sink.samples(std::span<const float>(dst, static_cast<std::size_t>(n)));
      frames += static_cast<std::size_t>(n);
      continue;
    }
    if (pcm16) {
      float* f = chunk.data();
      for (std::size_t i = 0; i < values; ++i) f[i] = static_cast<float>(ints[i]) * (1.0f / 32768.0f);
    } else {
      // One branch-free pass first; `!(|x| <= max)` also catches NaN. Past it, sums cannot overflow.
      bool bad = false;
      for (std::size_t i = 0; i < values; ++i) bad |= !(std::abs(p[i]) <= max_magnitude);
      if (bad) {
        std::size_t i = 0;
        while (std::abs(p[i]) <= max_magnitude) ++i;
        const std::string where =
            " at frame " + std::to_string(frames + i / channels) + ", channel " + std::to_string(i % channels);
        if (!std::isfinite(p[i])) refuse(what, "non-finite sample (NaN or infinity)" + where);
        char value[32];
        std::snprintf(value, sizeof value, "%g", double(p[i]));
        refuse(what, std::string("sample magnitude out of range (") + value + ", over 1e6 times full scale)" + where);
      }
    }
    float* dst = mono.data();
    if (channels == 1) {
      dst = chunk.data();
    } else if (channels == 2) {
      for (sf_count_t i = 0; i < n; ++i) dst[i] = (p[2 * i] + p[2 * i + 1]) * 0.5f;
    } else {
      for (sf_count_t i = 0; i < n; ++i, p += channels) {
        float sum = 0;
        for (int c = 0; c < channels; ++c) sum += p[c];
        dst[i] = sum * scale;
      }
    }
    sink.samples(std::span<const float>(dst, static_cast<std::size_t>(n)));
    frames += static_cast<std::size_t>(n);
  }
  if (const int err = sf_error(file.get()); err != SF_ERR_NO_ERROR)
    refuse(what, "truncated or corrupt audio data after " + std::to_string(frames) +
                     " frames (libsndfile: " + sf_error_number(err) + ")");
  if (frames == 0) refuse(what, "no audio frames (truncated or empty audio data)");
  const double seconds = double(frames) / rate;
  if (seconds < limits.min_seconds)
    refuse(what, "too short (" + seconds_text(seconds) + " < " + seconds_text(limits.min_seconds) + " minimum)");
  out.frames = frames;
  return out;
}

DecodedAudio decode_audio(std::string_view bytes, const DecodeLimits& limits, std::string_view what) {
  /// Keeps every sample, the whole clip sized once from the header's frame count.
  struct Collect final : DecodeSink {
    std::vector<float> kept;
    void start(int, std::size_t frames_hint) override { kept.reserve(frames_hint); }
    void samples(std::span<const float> mono) override { kept.insert(kept.end(), mono.begin(), mono.end()); }
  };
  Collect sink;
  DecodedAudio out = decode_audio(bytes, limits, what, sink);
  out.samples = std::move(sink.kept);
  return out;
}

DecodedAudio decode_audio_file(const std::string& path, const DecodeLimits& limits) {
  return decode_audio(read_reference_file(path, limits.max_payload_bytes), limits, path);
}

std::vector<std::string> readable_formats() {
  int count = 0;
  sf_command(nullptr, SFC_GET_FORMAT_MAJOR_COUNT, &count, sizeof count);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    SF_FORMAT_INFO info{};
    info.format = i;
    if (sf_command(nullptr, SFC_GET_FORMAT_MAJOR, &info, sizeof info) == 0 && info.name) {
      std::string name = info.name;
      if (name.find(' ') != std::string::npos) name.resize(name.find(' '));
      out.push_back(name);
    }
  }
  return out;
}

}  // namespace refenc::audio
