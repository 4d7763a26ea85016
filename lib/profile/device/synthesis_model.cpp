#include "profile/device/synthesis_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace refenc::profile {
namespace {

/// Sleeps until `deadline`; the engine's clock advances by modelled durations, not by sleep overshoot.
void sleep_until(std::chrono::steady_clock::time_point deadline) { std::this_thread::sleep_until(deadline); }

}  // namespace

int SynthesisModel::text_tokens(std::string_view text) const {
  return std::max(1, static_cast<int>(std::ceil(static_cast<double>(text.size()) / spec_.chars_per_text_token)));
}

SynthesisTiming SynthesisModel::run(double ref_frames, int text_tokens) {
  using Clock = std::chrono::steady_clock;
  struct Active {
    std::atomic<int>& n;
    explicit Active(std::atomic<int>& a) : n(a) { ++n; }
    ~Active() { --n; }
  } in_engine(active_);

  SynthesisTiming t;
  t.audio_seconds = text_tokens * spec_.audio_seconds_per_text_token;
  int steps_end = std::max(1, static_cast<int>(std::ceil(t.audio_seconds * spec_.steps_per_audio_second)));
  int steps_first = std::min(spec_.steps_to_first_audio, steps_end);
  t.steps = steps_end;
  t.prefill_s = (spec_.prefill_base_ms + spec_.prefill_per_ref_frame_ms * ref_frames +
                 spec_.prefill_per_text_token_ms * text_tokens) /
                1000.0;
  auto start = Clock::now();
  double elapsed = t.prefill_s;
  if (sleep_) sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(elapsed)));
  for (int s = 1; s <= steps_end; ++s) {
    int others = std::max(0, active_.load() - 1);
    elapsed += (spec_.step_base_ms + spec_.step_per_active_ms * others) / 1000.0;
    if (sleep_)
      sleep_until(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(elapsed)));
    if (s == steps_first) t.first_audio_s = elapsed;
  }
  if (steps_first == 0) t.first_audio_s = t.prefill_s;
  t.end_s = elapsed;
  return t;
}

}  // namespace refenc::profile
