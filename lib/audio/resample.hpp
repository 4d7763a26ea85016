// Sample-rate conversion of mono float32 with libsamplerate.
//
//   std::vector<float> y = audio::resample(x, 48000, 24000, audio::ResampleQuality::medium);
//   // y.size() == round(x.size() * 24000 / 48000)
#pragma once

#include "audio/resample_quality.hpp"

#include <span>
#include <string_view>
#include <vector>

namespace refenc::audio {

/// libsamplerate converter for a quality: SRC_SINC_BEST_QUALITY, SRC_SINC_MEDIUM_QUALITY,
/// SRC_SINC_FASTEST, SRC_ZERO_ORDER_HOLD, SRC_LINEAR (polyphase: SRC_SINC_MEDIUM_QUALITY, its fallback).
int src_converter(ResampleQuality quality) noexcept;

/// Output length for `frames` input frames: round(frames * to_rate / from_rate).
std::size_t resampled_length(std::size_t frames, int from_rate, int to_rate) noexcept;

/// Converts `input` from `from_rate` to `to_rate`; the result has exactly resampled_length() samples
/// (libsamplerate's flushed output, trimmed or padded by at most a sample or two; or
/// resample_polyphase for ResampleQuality::polyphase). Equal rates copy.
/// Refuses (Error(bad_input) naming `what`) a ratio libsamplerate cannot do (outside 1/256..256).
std::vector<float> resample(std::span<const float> input, int from_rate, int to_rate, ResampleQuality quality,
                            std::string_view what = "audio");

}  // namespace refenc::audio
