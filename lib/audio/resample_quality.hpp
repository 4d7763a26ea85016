// The choice of sample-rate converter: libsamplerate's five, or refenc's own polyphase filter bank
// (the default), with their short names for command lines and reports.
//
//   audio::ResampleQuality q = audio::parse_resample_quality("medium");   // throws on an unknown name
//   audio::to_string(q);                                                  // "medium"
#pragma once

#include <string_view>

namespace refenc::audio {

/// best..linear are libsamplerate's converters; polyphase is refenc's own windowed-sinc filter bank for
/// rational ratios (falls back to medium when the reduced ratio needs over 4096 phases).
enum class ResampleQuality { best, medium, fastest, zero_order_hold, linear, polyphase };

/// Short lower-case name of a quality ("best", "medium", ..., "polyphase"); parse_resample_quality is
/// its inverse and throws Error(bad_input) on an unknown name.
std::string_view to_string(ResampleQuality quality) noexcept;
ResampleQuality parse_resample_quality(std::string_view name);

}  // namespace refenc::audio
