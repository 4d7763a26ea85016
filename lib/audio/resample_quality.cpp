#include "audio/resample_quality.hpp"

#include "core/error.hpp"

#include <string>

namespace refenc::audio {

std::string_view to_string(ResampleQuality quality) noexcept {
  switch (quality) {
    case ResampleQuality::best: return "best";
    case ResampleQuality::medium: return "medium";
    case ResampleQuality::fastest: return "fastest";
    case ResampleQuality::zero_order_hold: return "zero_order_hold";
    case ResampleQuality::linear: return "linear";
    case ResampleQuality::polyphase: return "polyphase";
  }
  return "medium";
}

ResampleQuality parse_resample_quality(std::string_view name) {
  for (auto q : {ResampleQuality::best, ResampleQuality::medium, ResampleQuality::fastest,
                 ResampleQuality::zero_order_hold, ResampleQuality::linear, ResampleQuality::polyphase})
    if (name == to_string(q)) return q;
  throw Error(ErrorKind::bad_input, "resample quality \"" + std::string(name.substr(0, 40)) +
                                        "\": unknown (best, medium, fastest, zero_order_hold, linear, polyphase)");
}

}  // namespace refenc::audio
