#include "audio/polyphase_resampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace refenc::audio {
namespace {

constexpr double cutoff_fraction = 0.91;  // of the lower Nyquist
constexpr double zero_crossings = 48;     // per side, at the cutoff's scale
constexpr double kaiser_beta = 14.0;      // ~140 dB stopband and passband ripple
constexpr int max_phases = 4096;
constexpr double max_coefficients = 4e6;  // 16 MB of filter bank at most
constexpr int lanes = 8;

double bessel_i0(double x) {
  double sum = 1, term = 1;
  for (int k = 1; k < 40; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

struct FilterBank {
  int phases = 0;     // L
  int taps = 0;       // per phase, a multiple of `lanes`
  int half = 0;       // H: taps reach H - 1 inputs back and H forward from the base sample
  std::vector<float> coefficients;  // phases x taps
};

FilterBank make_bank(int up, int down) {
  FilterBank bank;
  bank.phases = up;
  const double scale = std::min(1.0, double(up) / down) * cutoff_fraction;
  const double reach = zero_crossings / scale;  // in input samples
  bank.half = static_cast<int>(std::ceil(reach));
  bank.taps = (2 * bank.half + lanes - 1) / lanes * lanes;
  bank.coefficients.assign(static_cast<std::size_t>(up) * bank.taps, 0.0f);
  const double i0_beta = bessel_i0(kaiser_beta);
  std::vector<double> row(static_cast<std::size_t>(bank.taps));
  for (int p = 0; p < up; ++p) {
    const double frac = double(p) / up;
    double sum = 0;
    for (int j = 0; j < 2 * bank.half; ++j) {
      const double t = frac + bank.half - 1 - j;  // input time of the output minus that of tap j
      const double r = t / reach;
      double h = 0;
      if (std::abs(r) < 1) {
        const double u = M_PI * scale * t;
        const double sinc = std::abs(u) < 1e-12 ? 1.0 : std::sin(u) / u;
        h = scale * sinc * bessel_i0(kaiser_beta * std::sqrt(1 - r * r)) / i0_beta;
      }
      row[static_cast<std::size_t>(j)] = h;
      sum += h;
    }
    float* out = bank.coefficients.data() + static_cast<std::size_t>(p) * bank.taps;
    for (int j = 0; j < 2 * bank.half; ++j) out[j] = static_cast<float>(row[static_cast<std::size_t>(j)] / sum);
  }
  return bank;
}

using Vec = float __attribute__((vector_size(lanes * sizeof(float))));

__attribute__((always_inline)) inline float dot(const float* a, const float* b, int n) {
  // Four independent accumulators hide the add latency; n is a multiple of `lanes`.
  Vec acc[4] = {};
  int i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    for (int u = 0; u < 4; ++u) {
      Vec x, y;
      std::memcpy(&x, a + i + u * lanes, sizeof x);
      std::memcpy(&y, b + i + u * lanes, sizeof y);
      acc[u] += x * y;
    }
  }
  for (; i < n; i += lanes) {
    Vec x, y;
    std::memcpy(&x, a + i, sizeof x);
    std::memcpy(&y, b + i, sizeof y);
    acc[0] += x * y;
  }
  const Vec sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float s = 0;
  for (int k = 0; k < lanes; ++k) s += sum[k];
  return s;
}

/// The output loop, compiled for AVX2 as well as the baseline; the loader picks one at run time.
__attribute__((target_clones("avx2", "default")))
void run_bank(const FilterBank& bank, const float* padded, float* out, std::int64_t count, int down) {
  const std::int64_t up = bank.phases, base_step = down / up, phase_step = down % up;
  std::int64_t base = 0, phase = 0;  // output k sits at input time base + phase / up
  for (std::int64_t k = 0; k < count; ++k) {
    const float* taps = bank.coefficients.data() + static_cast<std::size_t>(phase) * bank.taps;
    // Tap j reads input base - (H - 1) + j, i.e. padded[base + j].
    out[k] = dot(taps, padded + base, bank.taps);
    base += base_step;
    phase += phase_step;
    if (phase >= up) {
      phase -= up;
      ++base;
    }
  }
}

}  // namespace

std::optional<std::vector<float>> resample_polyphase(std::span<const float> input, int from_rate, int to_rate) {
  if (from_rate <= 0 || to_rate <= 0) return std::nullopt;
  const int g = std::gcd(from_rate, to_rate);
  const int up = to_rate / g, down = from_rate / g;
  if (up > max_phases) return std::nullopt;
  const double reach = zero_crossings / (std::min(1.0, double(up) / down) * cutoff_fraction);
  if (double(up) * 2 * (reach + lanes) > max_coefficients) return std::nullopt;
  const auto n = static_cast<std::int64_t>(input.size());
  const auto expected = static_cast<std::int64_t>(std::llround(double(n) * to_rate / from_rate));
  std::vector<float> out(static_cast<std::size_t>(expected));
  if (expected == 0) return out;
  const FilterBank bank = make_bank(up, down);
  // Zero padding: H - 1 before the first sample, enough after the last for the final taps.
  const std::int64_t lead = bank.half - 1;
  std::vector<float> padded(static_cast<std::size_t>(lead + n + bank.taps + 2), 0.0f);
  std::copy(input.begin(), input.end(), padded.begin() + lead);
  run_bank(bank, padded.data(), out.data(), expected, down);
  return out;
}

}  // namespace refenc::audio
