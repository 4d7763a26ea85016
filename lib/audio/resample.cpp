#include "audio/resample.hpp"

#include "audio/polyphase_resampler.hpp"
#include "core/error.hpp"

#include <samplerate.h>

#include <cmath>
#include <memory>
#include <string>

namespace refenc::audio {
namespace {

struct StateCloser {
  void operator()(SRC_STATE* s) const { src_delete(s); }
};

}  // namespace

int src_converter(ResampleQuality quality) noexcept {
  switch (quality) {
    case ResampleQuality::best: return SRC_SINC_BEST_QUALITY;
    case ResampleQuality::medium: return SRC_SINC_MEDIUM_QUALITY;
    case ResampleQuality::fastest: return SRC_SINC_FASTEST;
    case ResampleQuality::zero_order_hold: return SRC_ZERO_ORDER_HOLD;
    case ResampleQuality::linear: return SRC_LINEAR;
    case ResampleQuality::polyphase: return SRC_SINC_MEDIUM_QUALITY;  // its fallback
  }
  return SRC_SINC_MEDIUM_QUALITY;
}

std::size_t resampled_length(std::size_t frames, int from_rate, int to_rate) noexcept {
  if (from_rate <= 0 || to_rate <= 0) return 0;
  return static_cast<std::size_t>(std::llround(double(frames) * double(to_rate) / double(from_rate)));
}

std::vector<float> resample(std::span<const float> input, int from_rate, int to_rate, ResampleQuality quality,
                            std::string_view what) {
  if (from_rate <= 0 || to_rate <= 0)
    throw Error(ErrorKind::bad_input, std::string(what) + ": cannot resample from " + std::to_string(from_rate) +
                                          " Hz to " + std::to_string(to_rate) + " Hz");
  if (from_rate == to_rate) return {input.begin(), input.end()};
  const double ratio = double(to_rate) / double(from_rate);
  if (!src_is_valid_ratio(ratio))
    throw Error(ErrorKind::bad_input, std::string(what) + ": cannot resample " + std::to_string(from_rate) + " Hz to " +
                                          std::to_string(to_rate) + " Hz (ratio outside 1/256..256)");
  const std::size_t expected = resampled_length(input.size(), from_rate, to_rate);
  if (input.empty()) return {};
  if (quality == ResampleQuality::polyphase)
    if (auto y = resample_polyphase(input, from_rate, to_rate)) return std::move(*y);
  std::vector<float> out(expected + 64);
  int err = 0;
  std::unique_ptr<SRC_STATE, StateCloser> state(src_new(src_converter(quality), 1, &err));
  if (!state) throw Error(ErrorKind::encode, std::string(what) + ": libsamplerate: " + src_strerror(err));
  SRC_DATA data{};
  data.src_ratio = ratio;
  data.end_of_input = 1;
  std::size_t in_pos = 0, out_pos = 0;
  while (out_pos < out.size()) {
    data.data_in = input.data() + in_pos;
    data.input_frames = static_cast<long>(input.size() - in_pos);
    data.data_out = out.data() + out_pos;
    data.output_frames = static_cast<long>(out.size() - out_pos);
    if ((err = src_process(state.get(), &data)) != 0)
      throw Error(ErrorKind::encode, std::string(what) + ": libsamplerate: " + src_strerror(err));
    in_pos += static_cast<std::size_t>(data.input_frames_used);
    out_pos += static_cast<std::size_t>(data.output_frames_gen);
    if (data.output_frames_gen == 0 && in_pos >= input.size()) break;
  }
  out.resize(expected);  // samples past out_pos (at most a couple) stay zero
  return out;
}

}  // namespace refenc::audio
