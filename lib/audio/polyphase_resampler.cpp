#include "audio/polyphase_resampler.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>

namespace refenc::audio {
namespace {

constexpr double cutoff_fraction = 0.91;             // of the lower Nyquist
constexpr double zero_crossings = 48;                // per side, at the cutoff's scale
constexpr double kaiser_beta = 14.0;                 // ~140 dB stopband and passband ripple
constexpr int max_phases = 4096;                     // and at most this many input branches
constexpr double max_coefficients = 4e6;             // 32 MB of tap table at most
constexpr std::int64_t block = 64;                   // tile cycles come in multiples of 4 vectors of the widest kernel
constexpr std::int64_t tile_outputs = 4096;          // outputs per tile, about
constexpr std::int64_t tile_input_floats = 1 << 16;  // input branches of a tile: 256 KB at most

double bessel_i0(double x) {
  double sum = 1, term = 1;
  for (int k = 1; k < 40; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

/// One tap of one phase: where its input sits in a tile (branch * stride + cycle offset) and its weight.
struct Tap {
  std::int32_t offset;
  float weight;
};

/// Output k = c * up + r ("cycle" c, phase row r) sits at input time k * down / up, i.e. at input
/// c * down + base_r plus the fraction phase_r / up. Its taps read inputs c * down + base_r + j - (H - 1),
/// j in [0, 2H). Splitting the input into `down` branches (branch q holds inputs i * down + q) makes
/// every tap of row r read, across consecutive cycles c, consecutive samples of one branch: a tile of
/// cycles is then computed `block` outputs at a time with plain vector loads, one broadcast weight per
/// tap, no gathers and no per-sample phase bookkeeping.
struct Plan {
  int up = 0, down = 0;
  int half = 0;             // H
  int taps = 0;             // 2H per row
  std::int64_t cycles = 0;  // per tile (G), a multiple of `block`
  std::int64_t stride = 0;  // floats per branch in a tile: G plus the taps' reach past the tile
  std::vector<Tap> table;   // up rows x taps, each row ordered by increasing |weight|
};

Plan make_plan(int up, int down) {
  Plan plan;
  plan.up = up;
  plan.down = down;
  const double scale = std::min(1.0, double(up) / down) * cutoff_fraction;
  const double reach = zero_crossings / scale;  // in input samples
  plan.half = static_cast<int>(std::ceil(reach));
  plan.taps = 2 * plan.half;
  // Tap j of row r reads branch sample c + (base_r + j) / down, base_r <= down - 1.
  const std::int64_t beyond = (down - 1 + plan.taps - 1) / down + 1;
  plan.cycles = std::max<std::int64_t>(block, (tile_outputs / up + block - 1) / block * block);
  while (plan.cycles > block && down * (plan.cycles + beyond) > tile_input_floats) plan.cycles -= block;
  plan.stride = plan.cycles + beyond;

  plan.table.resize(static_cast<std::size_t>(up) * plan.taps);
  const double i0_beta = bessel_i0(kaiser_beta);
  std::vector<double> row(static_cast<std::size_t>(plan.taps));
  for (int r = 0; r < up; ++r) {
    const std::int64_t position = std::int64_t(r) * down;
    const int phase = static_cast<int>(position % up);
    const std::int64_t base = position / up;
    const double frac = double(phase) / up;
    double sum = 0;
    for (int j = 0; j < plan.taps; ++j) {
      const double t = frac + plan.half - 1 - j;  // input time of the output minus that of tap j
      const double u = t / reach;
      double h = 0;
      if (std::abs(u) < 1) {
        const double v = M_PI * scale * t;
        const double sinc = std::abs(v) < 1e-12 ? 1.0 : std::sin(v) / v;
        h = scale * sinc * bessel_i0(kaiser_beta * std::sqrt(1 - u * u)) / i0_beta;
      }
      row[static_cast<std::size_t>(j)] = h;
      sum += h;
    }
    Tap* out = plan.table.data() + static_cast<std::size_t>(r) * plan.taps;
    for (int j = 0; j < plan.taps; ++j) {
      const std::int64_t at = base + j;
      out[j] = {static_cast<std::int32_t>((at % down) * plan.stride + at / down),
                static_cast<float>(row[static_cast<std::size_t>(j)] / sum)};
    }
    // Small weights first: the sum grows to its full size only in the last few taps, which keeps the
    // float rounding of a 100-to-200-term sum near that of a single addition.
    std::stable_sort(out, out + plan.taps,
                     [](const Tap& a, const Tap& b) { return std::abs(a.weight) < std::abs(b.weight); });
  }
  return plan;
}

/// make_plan(up, down), kept for the next clip at the same rates: the most recently used plans, up to
/// 16 MB of tables in all (a plan over 4 MB is built for each clip).
std::shared_ptr<const Plan> shared_plan(int up, int down) {
  constexpr std::size_t budget = 16u << 20;
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const Plan>> recent;  // least recently used first
  auto bytes = [](const Plan& p) { return p.table.size() * sizeof(Tap); };
  {
    std::lock_guard lock(mutex);
    for (auto it = recent.begin(); it != recent.end(); ++it)
      if ((*it)->up == up && (*it)->down == down) {
        auto plan = *it;
        recent.erase(it);
        recent.push_back(plan);
        return plan;
      }
  }
  auto plan = std::make_shared<const Plan>(make_plan(up, down));
  if (bytes(*plan) > budget / 4) return plan;
  std::lock_guard lock(mutex);
  for (const auto& p : recent)
    if (p->up == up && p->down == down) return p;  // another thread built it meanwhile
  recent.push_back(plan);
  std::size_t total = 0;
  for (const auto& p : recent) total += bytes(*p);
  while (total > budget) {
    total -= bytes(*recent.front());
    recent.erase(recent.begin());
  }
  return plan;
}

/// Computes `cycles` cycles (a multiple of `block`) of every row of a tile: out[r * cycles + c].
template <int W>
[[gnu::always_inline]] inline void run_tile_impl(const Plan& plan, const float* in, float* out) {
  typedef float V __attribute__((vector_size(W * sizeof(float))));
  static_assert(sizeof(V) == W * sizeof(float));
  static_assert(block % (4 * W) == 0);
  for (int r = 0; r < plan.up; ++r) {
    const Tap* row = plan.table.data() + static_cast<std::size_t>(r) * plan.taps;
    float* o = out + r * plan.cycles;
    for (std::int64_t c = 0; c < plan.cycles; c += 4 * W) {
      V a0 = {}, a1 = {}, a2 = {}, a3 = {};
      const float* x = in + c;
      for (int t = 0; t < plan.taps; ++t) {
        const V w = V{} + row[t].weight;
        const float* p = x + row[t].offset;
        V x0, x1, x2, x3;
        std::memcpy(&x0, p, sizeof x0);
        std::memcpy(&x1, p + W, sizeof x1);
        std::memcpy(&x2, p + 2 * W, sizeof x2);
        std::memcpy(&x3, p + 3 * W, sizeof x3);
        a0 += w * x0;
        a1 += w * x1;
        a2 += w * x2;
        a3 += w * x3;
      }
      std::memcpy(o + c, &a0, sizeof a0);
      std::memcpy(o + c + W, &a1, sizeof a1);
      std::memcpy(o + c + 2 * W, &a2, sizeof a2);
      std::memcpy(o + c + 3 * W, &a3, sizeof a3);
    }
  }
}

using TileFn = void (*)(const Plan&, const float*, float*);

void run_tile_baseline(const Plan& plan, const float* in, float* out) { run_tile_impl<4>(plan, in, out); }

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma"))) void run_tile_avx2(const Plan& plan, const float* in, float* out) {
  run_tile_impl<8>(plan, in, out);
}
__attribute__((target("avx512f"))) void run_tile_avx512(const Plan& plan, const float* in, float* out) {
  run_tile_impl<16>(plan, in, out);
}
#endif

bool supported(PolyphaseKernel kernel) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  switch (kernel) {
    case PolyphaseKernel::avx512: return __builtin_cpu_supports("avx512f");
    case PolyphaseKernel::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default: return true;
  }
#else
  return kernel == PolyphaseKernel::baseline || kernel == PolyphaseKernel::automatic;
#endif
}

TileFn tile_fn(PolyphaseKernel kernel) {
  if (kernel == PolyphaseKernel::automatic)
    for (auto k : {PolyphaseKernel::avx512, PolyphaseKernel::avx2})
      if (supported(k)) return tile_fn(k);
#if defined(__x86_64__) || defined(__i386__)
  if (kernel == PolyphaseKernel::avx512 && supported(kernel)) return run_tile_avx512;
  if (kernel == PolyphaseKernel::avx2 && supported(kernel)) return run_tile_avx2;
#endif
  return run_tile_baseline;
}

/// Fills a tile's branches: in[q * stride + i] = x[(c0 + i) * down + q - (H - 1)], where x[t] is
/// data[t - begin] for t in [max(begin, 0), end) and zero elsewhere (before the clip, past its end).
void fill_tile(const Plan& plan, const float* data, std::int64_t begin, std::int64_t end, std::int64_t c0, float* in) {
  const std::int64_t down = plan.down;
  const std::int64_t first = c0 * down - (plan.half - 1);
  const std::int64_t lo = std::max<std::int64_t>(begin, 0);
  if (first >= lo && first + plan.stride * down <= end) {
    const float* src = data + (first - begin);
    if (down == 1) {
      std::memcpy(in, src, static_cast<std::size_t>(plan.stride) * sizeof(float));
    } else if (down == 2) {
      float* even = in;
      float* odd = in + plan.stride;
      for (std::int64_t i = 0; i < plan.stride; ++i) {
        even[i] = src[2 * i];
        odd[i] = src[2 * i + 1];
      }
    } else {
      for (std::int64_t i = 0; i < plan.stride; ++i, src += down)
        for (std::int64_t q = 0; q < down; ++q) in[q * plan.stride + i] = src[q];
    }
    return;
  }
  for (std::int64_t i = 0; i < plan.stride; ++i)
    for (std::int64_t q = 0; q < down; ++q) {
      const std::int64_t at = first + i * down + q;
      in[q * plan.stride + i] = at >= lo && at < end ? data[at - begin] : 0.0f;
    }
}

}  // namespace

struct PolyphaseStream::State {
  std::shared_ptr<const Plan> plan;
  TileFn run_tile = nullptr;
  int from_rate = 0, to_rate = 0;
  std::vector<float> in, tile, out;
  std::vector<float> pending;  // input samples [pending_begin, pushed) still needed by later tiles
  std::int64_t pending_begin = 0;
  std::int64_t pushed = 0;  // input samples received
  std::int64_t c0 = 0;      // first cycle of the next tile

  std::int64_t first() const { return c0 * plan->down - (plan->half - 1); }
  std::int64_t span() const { return plan->stride * plan->down; }

  /// Computes the next tile from input x (see fill_tile) and appends its cycles * up outputs.
  void emit_tile(const float* data, std::int64_t begin, std::int64_t end) {
    fill_tile(*plan, data, begin, end, c0, in.data());
    run_tile(*plan, in.data(), tile.data());
    const std::int64_t up = plan->up, k0 = static_cast<std::int64_t>(out.size());
    out.resize(static_cast<std::size_t>(k0 + plan->cycles * up));
    if (up == 1) {
      std::memcpy(out.data() + k0, tile.data(), static_cast<std::size_t>(plan->cycles) * sizeof(float));
    } else {
      // Row-major tile (row r, cycle c) to output k0 + c * up + r.
      float* dst = out.data() + k0;
      for (std::int64_t c = 0; c < plan->cycles; ++c, dst += up)
        for (std::int64_t r = 0; r < up; ++r) dst[r] = tile[static_cast<std::size_t>(r * plan->cycles + c)];
    }
    c0 += plan->cycles;
  }
};

PolyphaseStream::PolyphaseStream(std::unique_ptr<State> state) : state_(std::move(state)) {}
PolyphaseStream::PolyphaseStream(PolyphaseStream&&) noexcept = default;
PolyphaseStream& PolyphaseStream::operator=(PolyphaseStream&&) noexcept = default;
PolyphaseStream::~PolyphaseStream() = default;

std::optional<PolyphaseStream> PolyphaseStream::open(int from_rate, int to_rate, std::size_t frames_hint,
                                                     PolyphaseKernel kernel) {
  if (from_rate <= 0 || to_rate <= 0) return std::nullopt;
  const int g = std::gcd(from_rate, to_rate);
  const int up = to_rate / g, down = from_rate / g;
  if (up > max_phases || down > max_phases) return std::nullopt;
  const double reach = zero_crossings / (std::min(1.0, double(up) / down) * cutoff_fraction);
  if (double(up) * 2 * (reach + 1) > max_coefficients) return std::nullopt;
  auto state = std::make_unique<State>();
  state->plan = shared_plan(up, down);
  state->run_tile = tile_fn(kernel);
  state->from_rate = from_rate;
  state->to_rate = to_rate;
  state->in.resize(static_cast<std::size_t>(state->span()));
  state->tile.resize(static_cast<std::size_t>(state->plan->cycles * up));
  if (frames_hint > 0)
    state->out.reserve(static_cast<std::size_t>(std::llround(double(frames_hint) * up / down)) + state->tile.size());
  return PolyphaseStream(std::move(state));
}

void PolyphaseStream::push(std::span<const float> input) {
  State& s = *state_;
  if (input.empty()) return;
  const float* data;
  std::int64_t begin;
  const bool direct = s.pending.empty() && (s.pushed == 0 || s.first() >= s.pushed);
  if (direct) {
    data = input.data();
    begin = s.pushed;
  } else {
    s.pending.insert(s.pending.end(), input.begin(), input.end());
    data = s.pending.data();
    begin = s.pending_begin;
  }
  const std::int64_t end = s.pushed + static_cast<std::int64_t>(input.size());
  s.pushed = end;
  while (s.first() + s.span() <= end) s.emit_tile(data, begin, end);
  // Keep what the next tile reads: from its first input on.
  const std::int64_t keep = std::clamp<std::int64_t>(s.first(), begin, end);
  if (direct) {
    s.pending.assign(data + (keep - begin), data + (end - begin));
    s.pending_begin = keep;
  } else if (keep - s.pending_begin > static_cast<std::int64_t>(s.pending.size()) / 2) {
    s.pending.erase(s.pending.begin(), s.pending.begin() + (keep - s.pending_begin));
    s.pending_begin = keep;
  }
}

std::size_t PolyphaseStream::frames() const noexcept { return static_cast<std::size_t>(state_->pushed); }

std::vector<float> PolyphaseStream::finish() {
  State& s = *state_;
  const auto expected = static_cast<std::int64_t>(std::llround(double(s.pushed) * s.to_rate / s.from_rate));
  while (static_cast<std::int64_t>(s.out.size()) < expected) s.emit_tile(s.pending.data(), s.pending_begin, s.pushed);
  s.out.resize(static_cast<std::size_t>(expected));
  std::vector<float> out = std::move(s.out);
  s.out = {};
  s.pending = {};
  s.pending_begin = s.pushed = s.c0 = 0;
  return out;
}

std::optional<std::vector<float>> resample_polyphase(std::span<const float> input, int from_rate, int to_rate,
                                                     PolyphaseKernel kernel) {
  auto stream = PolyphaseStream::open(from_rate, to_rate, input.size(), kernel);
  if (!stream) return std::nullopt;
  stream->push(input);
  return stream->finish();
}

}  // namespace refenc::audio
