// SynthesisModel: a modelled continuous-batching TTS engine. The language model is not run; its time
// is spent sleeping, as a GPU-side stage would cost no host CPU.
//
// A request entering the engine pays a prefill of base + per_ref_frame * frames + per_text_token *
// tokens, then decode steps; each step lasts step_base + step_per_active * (active - 1), where `active`
// counts the requests in the engine at that moment. The first audio chunk is out after
// steps_to_first_audio steps, the end after ceil(audio_seconds * steps_per_audio_second) steps, where
// audio_seconds = tokens * audio_seconds_per_text_token. One model per cell is shared by its requests.
//
//   SynthesisModel synth(spec.synthesis);
//   SynthesisTiming t = synth.run(ref_seconds * 21.5, synth.text_tokens(text));   // sleeps
//   double first = t.first_audio_s, end = t.end_s;
#pragma once

#include <atomic>
#include <string_view>

#include "profile/record/workload_specs.hpp"

namespace refenc::profile {

struct SynthesisTiming {
  double prefill_s = 0;      ///< Modelled prefill.
  double first_audio_s = 0;  ///< From entering the engine to the first audio chunk.
  double end_s = 0;          ///< From entering the engine to the last chunk.
  double audio_seconds = 0;  ///< Audio produced.
  int steps = 0;
};

class SynthesisModel {
 public:
  explicit SynthesisModel(SynthesisSpec spec, bool sleep = true) : spec_(std::move(spec)), sleep_(sleep) {}

  /// Runs one request through the modelled engine (sleeping unless constructed with sleep = false).
  SynthesisTiming run(double ref_frames, int text_tokens);

  /// Text tokens of `text` under the spec's chars-per-token model (at least 1).
  int text_tokens(std::string_view text) const;

  /// Requests now in the engine.
  int active() const noexcept { return active_.load(); }

  const SynthesisSpec& spec() const noexcept { return spec_; }

 private:
  SynthesisSpec spec_;
  bool sleep_;
  std::atomic<int> active_{0};
};

}  // namespace refenc::profile
