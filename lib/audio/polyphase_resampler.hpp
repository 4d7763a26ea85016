// A polyphase windowed-sinc resampler for rational rate ratios (48000 -> 44100 is 147/160): one
// precomputed Kaiser-windowed sinc filter per output phase. It backs ResampleQuality::polyphase, the
// fast high-quality path (measurements in docs/figures.md).
//
//   std::optional<std::vector<float>> y = audio::resample_polyphase(x, 48000, 24000);
//   // nullopt when the reduced ratio needs more than 4096 phases (then use libsamplerate)
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace refenc::audio {

/// The vector code that computes the filter: `automatic` picks the widest the CPU runs (AVX-512,
/// else AVX2 with FMA, else `baseline`, plain 4-lane vectors); naming one the CPU lacks gives
/// `baseline`. The kernels differ only in float rounding (FMA or not), never by more than ~1e-7.
enum class PolyphaseKernel { automatic, avx512, avx2, baseline };

/// Resamples `input` from `from_rate` to `to_rate` (both > 0), giving exactly
/// round(size * to_rate / from_rate) samples aligned with the input (output k sits at input time
/// k * from_rate / to_rate). Kaiser window (beta 14, 48 zero crossings a side), cutoff at 0.91 x the
/// lower Nyquist: about 140 dB SNR on tones up to 0.8 x that Nyquist. The input is split into
/// from/gcd branches so that each tap reads consecutive outputs' inputs with one vector load (an
/// exact 2:1 decimator for 48 -> 24 kHz: even and odd samples, only kept outputs computed); each
/// output sums its taps smallest weight first. Returns nullopt when the reduced ratio needs more than
/// 4096 phases or branches, or a bank of over 4M coefficients (exotic rate pairs).
std::optional<std::vector<float>> resample_polyphase(std::span<const float> input, int from_rate, int to_rate,
                                                     PolyphaseKernel kernel = PolyphaseKernel::automatic);

/// The same resampling fed in pieces, for a clip decoded chunk by chunk: finish() returns exactly what
/// resample_polyphase would for the concatenated input, and the input is never held at its own rate
/// (only the few thousand samples the next tile of outputs needs).
///
///   std::optional<audio::PolyphaseStream> s = audio::PolyphaseStream::open(48000, 24000);
///   s->push(chunk1); s->push(chunk2);          // any sizes, including empty
///   std::vector<float> y = s->finish();        // round(frames * 24000 / 48000) samples
class PolyphaseStream {
 public:
  /// nullopt where resample_polyphase would give nullopt. `frames_hint`, when the input length is known
  /// in advance, sizes the output once.
  static std::optional<PolyphaseStream> open(int from_rate, int to_rate, std::size_t frames_hint = 0,
                                             PolyphaseKernel kernel = PolyphaseKernel::automatic);
  PolyphaseStream(PolyphaseStream&&) noexcept;
  PolyphaseStream& operator=(PolyphaseStream&&) noexcept;
  ~PolyphaseStream();

  /// Appends input samples; computes every output whose taps they complete.
  void push(std::span<const float> input);
  /// Input samples pushed so far.
  std::size_t frames() const noexcept;
  /// Flushes (zeros past the end) and returns round(frames() * to_rate / from_rate) samples; the
  /// stream is then empty, as if just opened.
  std::vector<float> finish();

 private:
  struct State;
  explicit PolyphaseStream(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace refenc::audio
