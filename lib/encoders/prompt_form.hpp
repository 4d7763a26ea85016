// Prompt form: an artifact written as the file each model's own serving code reads for a precomputed
// reference, so that a reference encoded by refenc can be handed to that model's tools directly.
//
//   fish-s2-pro     codes.npy          int64 [10, T]; fish-speech `--prompt-tokens codes.npy`
//   qwen3-tts       prompt.pt          torch.save({"items": [VoiceClonePromptItem as a dict]}), what
//                                      Qwen3-TTS's demo saves and loads with torch.load(weights_only=True)
//   moss-tts-local  reference.jsonl    one JSON line {"ref_audio_codes": [[32 ints] x T]}, the field
//                                      MOSS-TTS's data preparation writes and its dataset reads
//
//   const PromptForm& f = prompt_form("qwen3-tts");    // f.extension == ".pt"
//   write_file_atomic(path, prompt_bytes("qwen3-tts", artifact));
#pragma once

#include <string>
#include <string_view>

#include "store/artifact.hpp"

namespace refenc::encoders {

struct PromptForm {
  std::string extension;    ///< ".npy", ".pt", ".jsonl".
  std::string description;  ///< One line: what the file holds and which upstream code reads it.
};

/// The prompt form of `model`; Error(config) for an unknown model.
const PromptForm& prompt_form(std::string_view model);

/// `artifact` (the caller form: int64 codes) in `model`'s prompt form. Throws Error(bad_input) where the
/// artifact cannot be one (a Qwen3-TTS ICL prompt without its reference text, as upstream refuses it).
std::string prompt_bytes(std::string_view model, const Artifact& artifact);

/// `t` as a NumPy .npy file (format 1.0, C order, little-endian int64 or float32).
std::string npy_bytes(const HostTensor& t);

}  // namespace refenc::encoders
