// A polyphase windowed-sinc resampler for rational rate ratios (48000 -> 44100 is 147/160): one
// precomputed Kaiser-windowed sinc filter per output phase, each output sample a short dot product.
// It backs ResampleQuality::polyphase, the fast high-quality path (see the README's measurements).
//
//   std::optional<std::vector<float>> y = audio::resample_polyphase(x, 48000, 24000);
//   // nullopt when the reduced ratio needs more than 4096 phases (then use libsamplerate)
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace refenc::audio {

/// Resamples `input` from `from_rate` to `to_rate` (both > 0), giving exactly
/// round(size * to_rate / from_rate) samples aligned with the input (output k sits at input time
/// k * from_rate / to_rate). Kaiser window (beta 14, 48 zero crossings a side), cutoff at 0.91 x the
/// lower Nyquist: about 140 dB SNR on tones up to 0.8 x that Nyquist. Returns nullopt when the reduced
/// ratio needs more than 4096 phases or a bank of over 4M coefficients (exotic rate pairs).
std::optional<std::vector<float>> resample_polyphase(std::span<const float> input, int from_rate, int to_rate);

}  // namespace refenc::audio
