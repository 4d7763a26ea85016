// Audio layer benchmark: decode + downmix + resample of 60 s of 48 kHz stereo (FLAC and WAV) to
// 44.1 kHz and 24 kHz mono, side by side with sox doing the same conversion on the same files; the
// SNR of each converter against an ideal resampler on test tones; and content-key hashing throughput.
//
//   build/release/bench/bench_audio            # prints the tables; the sox columns need `sox` on PATH
//   build/release/bench/bench_audio --quick    # 1 repetition instead of 3
#include "audio/content_key.hpp"
#include "audio/path_key_memo.hpp"
#include "audio/reference_loader.hpp"
#include "audio/resample.hpp"

#include <sndfile.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <ctime>

using namespace refenc;
using namespace refenc::audio;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// CPU seconds of this thread, and of all waited-for children (sox): robust on a shared machine.
double thread_cpu() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

double children_cpu() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// 60 s of speech-like stereo: a gliding harmonic series under a syllable envelope, plus a little noise.
std::vector<float> speech_like(long frames, int rate, int channels) {
  std::vector<float> out(static_cast<std::size_t>(frames * channels));
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.003f);
  double phase = 0;
  for (long i = 0; i < frames; ++i) {
    const double t = double(i) / rate;
    const double f0 = 120 + 40 * std::sin(2 * M_PI * 0.7 * t);
    phase += 2 * M_PI * f0 / rate;
    double v = 0;
    for (int h = 1; h <= 20; ++h) v += std::sin(h * phase + h) / h;
    v *= 0.15 * (0.55 + 0.45 * std::sin(2 * M_PI * 4.0 * t));
    for (int c = 0; c < channels; ++c)
      out[static_cast<std::size_t>(i * channels + c)] = static_cast<float>(v * (c ? 0.8 : 1.0)) + noise(rng);
  }
  return out;
}

bool write_file(const std::string& path, int format, int rate, int channels, const std::vector<float>& interleaved) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (!f) return false;
  const sf_count_t frames = static_cast<sf_count_t>(interleaved.size() / channels);
  const bool ok = sf_writef_float(f, interleaved.data(), frames) == frames;
  sf_close(f);
  return ok;
}

std::vector<float> read_mono(const std::string& path, int* rate) {
  SF_INFO info{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (!f) return {};
  std::vector<float> out(static_cast<std::size_t>(info.frames * info.channels));
  sf_readf_float(f, out.data(), info.frames);
  sf_close(f);
  *rate = info.samplerate;
  return out;
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// SNR (dB) of a resampled tone against the exact tone at the output rate, edges excluded.
double tone_snr(const std::vector<float>& y, double freq, int rate, double amplitude) {
  const std::size_t edge = static_cast<std::size_t>(rate / 20);
  double signal = 0, err = 0;
  for (std::size_t i = edge; i + edge < y.size(); ++i) {
    const double ideal = amplitude * std::sin(2 * M_PI * freq * double(i) / rate);
    signal += ideal * ideal;
    err += (y[i] - ideal) * (y[i] - ideal);
  }
  return 10 * std::log10(signal / std::max(err, 1e-300));
}

const char* sox_option(ResampleQuality q) {
  switch (q) {
    case ResampleQuality::best: return "-v";
    case ResampleQuality::medium: return "-m";
    case ResampleQuality::fastest: return "-q";
    case ResampleQuality::polyphase: return "-v";
    default: return "-q";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 && std::string(argv[1]) == "--quick" ? 1 : 3;
  const fs::path dir = fs::temp_directory_path() / ("refenc-audio-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const bool have_sox = run("sox --version >/dev/null 2>&1") == 0;

  // 1. Decode + downmix + resample vs sox.
  const int in_rate = 48000, seconds = 60;
  const auto stereo = speech_like(long(in_rate) * seconds, in_rate, 2);
  const std::string flac = (dir / "ref60.flac").string(), wav = (dir / "ref60.wav").string();
  write_file(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, in_rate, 2, stereo);
  write_file(wav, SF_FORMAT_WAV | SF_FORMAT_PCM_16, in_rate, 2, stereo);
  std::printf(
      "decode + downmix + resample, %d s of %d Hz stereo, median of %d. refenc: load_reference in-process;"
      " sox: `sox -V1 IN -r RATE -c 1 -n rate OPT` (null output), a subprocess. cpu = CPU time (thread /"
      " child), wall = elapsed\n",
      seconds, in_rate, reps);
  std::printf("%-5s %-6s %-8s %9s %9s %9s %9s %9s %9s %9s\n", "file", "to Hz", "quality", "cpu ms", "wall ms", "decode",
              "resample", "sox cpu", "sox wall", "sox/ours");
  for (const auto& [name, path] : {std::pair{"FLAC", flac}, std::pair{"WAV", wav}}) {
    for (int target : {44100, 24000}) {
      for (auto q :
           {ResampleQuality::best, ResampleQuality::medium, ResampleQuality::fastest, ResampleQuality::polyphase}) {
        std::vector<double> ours, ours_cpu, decode, resample_t, sox, sox_cpu;
        for (int r = 0; r < reps; ++r) {
          LoadOptions opt;
          opt.target_rate = target;
          opt.quality = q;
          const double c0 = thread_cpu();
          const auto t = Clock::now();
          const LoadedReference ref = load_reference(ReferenceSource::from_path(path), opt);
          ours.push_back(seconds_since(t));
          ours_cpu.push_back(thread_cpu() - c0);
          decode.push_back(ref.timings.read + ref.timings.decode);
          resample_t.push_back(ref.timings.resample);
          if (have_sox) {
            const double s0 = children_cpu();
            const auto s = Clock::now();
            run("sox -V1 '" + path + "' -r " + std::to_string(target) + " -c 1 -n rate " + sox_option(q));
            sox.push_back(seconds_since(s));
            sox_cpu.push_back(children_cpu() - s0);
          }
        }
        const double oc = median(ours_cpu), xc = have_sox ? median(sox_cpu) : 0;
        std::printf("%-5s %-6d %-8s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.2f\n", name, target,
                    std::string(to_string(q)).c_str(), oc * 1e3, median(ours) * 1e3, median(decode) * 1e3,
                    median(resample_t) * 1e3, xc * 1e3, have_sox ? median(sox) * 1e3 : 0.0, have_sox ? xc / oc : 0.0);
      }
    }
  }

  // 2. Quality: SNR against an ideal resampler on tones, and single-thread converter speed.
  struct Pair {
    int from, to;
  };
  const Pair pairs[] = {{48000, 44100}, {48000, 24000}, {44100, 24000}, {16000, 24000}};
  std::vector<float> mono60(static_cast<std::size_t>(in_rate) * seconds);
  for (std::size_t i = 0; i < mono60.size(); ++i) mono60[i] = stereo[2 * i];
  // Worst SNR over the band's tones: speech band = 200, 1000, 3000 Hz; high band = 0.4 x the lower rate.
  auto band_tones = [](bool high, const Pair& p) {
    return high ? std::vector<double>{0.4 * std::min(p.from, p.to)} : std::vector<double>{200.0, 1000.0, 3000.0};
  };
  auto min_snr = [&](auto convert, const Pair& p, bool high) {
    double worst = 1e9;
    for (double f : band_tones(high, p)) {
      std::vector<float> x(static_cast<std::size_t>(p.from) * 2);
      for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(0.5 * std::sin(2 * M_PI * f * double(i) / p.from));
      worst = std::min(worst, tone_snr(convert(x, p), f, p.to, 0.5));
    }
    return worst;
  };
  for (bool high : {false, true}) {
    std::printf("\nresampler SNR (dB) vs the exact tone at the output rate, worst of %s, 0.5-amplitude, 2 s%s\n",
                high ? "a tone at 0.4 x the lower rate (80% of its Nyquist)" : "200/1000/3000 Hz tones (speech band)",
                high ? "" : "; speed on 60 s of 48 kHz mono to 24 kHz");
    std::printf("%-16s", "quality");
    for (const auto& p : pairs) std::printf(" %5d>%-5d", p.from / 1000, p.to / 1000);
    std::printf(high ? "\n" : " %12s\n", "Msamples/s");
    for (auto q : {ResampleQuality::best, ResampleQuality::medium, ResampleQuality::fastest, ResampleQuality::linear,
                   ResampleQuality::zero_order_hold, ResampleQuality::polyphase}) {
      std::printf("%-16s", std::string(to_string(q)).c_str());
      for (const auto& p : pairs)
        std::printf(" %11.1f",
                    min_snr([&](const std::vector<float>& x, const Pair& pp) { return resample(x, pp.from, pp.to, q); },
                            p, high));
      if (!high) {
        const double c0 = thread_cpu();
        const auto y = resample(mono60, in_rate, 24000, q);
        std::printf(" %12.1f", double(mono60.size()) / (thread_cpu() - c0) / 1e6);
      }
      std::printf("\n");
    }
    if (have_sox) {
      for (const char* opt : {"-v", "-m", "-q"}) {
        std::printf("sox rate %-7s", opt);
        for (const auto& p : pairs) {
          std::printf(" %11.1f", min_snr(
                                     [&](const std::vector<float>& x, const Pair& pp) {
                                       const std::string in = (dir / "tone_in.wav").string(),
                                                         out = (dir / "tone_out.wav").string();
                                       write_file(in, SF_FORMAT_WAV | SF_FORMAT_FLOAT, pp.from, 1, x);
                                       run("sox -V1 '" + in + "' -e floating-point -b 32 -r " + std::to_string(pp.to) +
                                           " '" + out + "' rate " + opt);
                                       int rate = 0;
                                       return read_mono(out, &rate);
                                     },
                                     p, high));
        }
        std::printf("\n");
      }
    }
  }

  // 3. Content-key hashing throughput.
  std::printf("\ncontent key hashing (SHA-256, libcrypto), 256 MiB, median of %d\n", reps);
  std::string big(256u << 20, '\0');
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i + 8 <= big.size(); i += 8) {
    const auto v = rng();
    std::memcpy(big.data() + i, &v, 8);
  }
  const std::string big_path = (dir / "big.bin").string();
  std::ofstream(big_path, std::ios::binary).write(big.data(), static_cast<std::streamsize>(big.size()));
  std::vector<double> mem, mem_cpu, file, file_cpu, hit;
  for (int r = 0; r < reps; ++r) {
    double c0 = thread_cpu();
    auto t = Clock::now();
    (void)content_key(big);
    mem.push_back(seconds_since(t));
    mem_cpu.push_back(thread_cpu() - c0);
    PathKeyMemo memo;
    c0 = thread_cpu();
    t = Clock::now();
    (void)path_cache_key(memo, big_path, false);
    file.push_back(seconds_since(t));
    file_cpu.push_back(thread_cpu() - c0);
    t = Clock::now();
    (void)path_cache_key(memo, big_path, false);
    hit.push_back(seconds_since(t));
  }
  const double gb = double(big.size()) / 1e9;
  std::printf("%-48s %6.2f GB/s cpu, %6.2f GB/s wall\n", "content_key(bytes), in memory", gb / median(mem_cpu),
              gb / median(mem));
  std::printf("%-48s %6.2f GB/s cpu, %6.2f GB/s wall\n", "reference_path_cache_key, memo miss (page cache)",
              gb / median(file_cpu), gb / median(file));
  std::printf("%-48s %6.3f ms wall\n", "reference_path_cache_key, memo hit + sentinel", median(hit) * 1e3);
  fs::remove_all(dir);
  return 0;
}
