// The reference encoders of refenc: one hook per model family, found by model name.
//
// A hook turns an `EncodeRequest` (a reference source plus the reference text) into an `Artifact`
// (named host tensors + metadata) through ReferenceEncodeService. The networks are LibTorch proxies
// of the published architectures with deterministic seeded weights, or a TorchScript module exported
// from a real checkpoint (`EncoderOptions::module_path`). No LibTorch type appears here.
//
//   using namespace refenc::encoders;
//   auto hook = make_hook("fish-s2-pro", {.scale = "tiny"});
//   EncodeService service(hook, {.max_bytes = 256 << 20});
//   Artifact a = service.get_or_encode({audio::ReferenceSource::parse("clip.flac"), ""});
//   a.tensor("codes").describe();   // "int64[10, 216]" for 10 s of audio
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "audio/reference_loader.hpp"
#include "core/reference_encode_hook.hpp"
#include "core/reference_encode_service.hpp"
#include "store/artifact.hpp"

namespace refenc::encoders {

/// What a caller asks for: a reference clip and the text spoken in it (read by Qwen3-TTS only).
struct EncodeRequest {
  audio::ReferenceSource source;
  std::string text;
  bool x_vector_only = false;  ///< Qwen3-TTS: speaker embedding only, no ref_code.
};

/// A request after decoding and resampling to the model's rate.
struct EncodeInput {
  audio::LoadedReference audio;
  std::string text;
  bool x_vector_only = false;
};

using EncoderHook = ReferenceEncodeHook<EncodeInput, Artifact, Artifact, EncodeRequest>;
using EncodeService = ReferenceEncodeService<EncodeInput, Artifact, Artifact, EncodeRequest>;

/// How an encoder is built. Every field that changes the artifact enters the encoder config hash.
struct EncoderOptions {
  std::string scale = "tiny";     ///< "full" (published dimensions), "small" or "tiny".
  std::string dtype = "float32";  ///< Network compute dtype: "float32" or "bfloat16".
  std::string device = "cpu";     ///< "cpu" or "cuda:N" (when LibTorch has CUDA).
  std::string module_path;        ///< TorchScript module replacing the proxy network (docs/encoders.md).
  std::string checkpoint;         ///< Published checkpoint (file or model folder) loaded into the network (docs/encoders.md).
  int threads = 0;                ///< LibTorch intra-op threads; 0 leaves LibTorch's setting.
  audio::LoadOptions load;        ///< Decode options; target_rate (and loudness for MOSS) are forced.
};

/// One tensor of an artifact as documented: name, dtype and shape with symbolic dimensions.
struct TensorInfo {
  std::string name;
  std::string dtype;  ///< Caller-side dtype ("int64", "float32").
  std::string shape;  ///< e.g. "[10, T]", T = ceil(samples / 2048).
  std::string note;
};

/// Static description of an encoder family.
struct ModelInfo {
  std::string name;  ///< "fish-s2-pro", "qwen3-tts", "moss-tts-local".
  std::string description;
  std::string encoder_id;     ///< ReferenceEncodeKey::encoder_id.
  std::string artifact_kind;  ///< ReferenceEncodeKey::artifact_kind.
  int sample_rate = 0;        ///< Input rate in Hz.
  int samples_per_frame = 0;  ///< Input samples per output code frame.
  double frame_rate = 0;      ///< Code frames per second.
  std::vector<TensorInfo> artifact;
  std::vector<std::string> meta_keys;
  bool reads_text = false;             ///< The reference text enters options_key.
  bool can_encode_batch = false;       ///< Opts into the generic M4b surface.
  bool has_internal_batching = false;  ///< Batches inside its own encode path.
  std::vector<std::string> scales;
  bool loudness_normalised = false;
  bool partial_frame_coded = true;  ///< A trailing partial frame gets a code frame (MOSS: whole frames only).

  /// Frames of code for `samples` input samples at sample_rate.
  std::int64_t frames_for(std::int64_t samples) const {
    return (samples + (partial_frame_coded ? samples_per_frame - 1 : 0)) / samples_per_frame;
  }
};

/// The three families, in a fixed order.
const std::vector<ModelInfo>& models();

/// The family named `model_name`; throws Error(config) listing the known names otherwise.
const ModelInfo& model_info(std::string_view model_name);

/// `base` with what the family's hook decodes references at: its input rate and, where the family
/// loudness-normalises, -20 dBFS with the gain clamped to +-3 dB.
audio::LoadOptions reference_load_options(const ModelInfo& info, audio::LoadOptions base = {});

/// Identity and cost of a built encoder.
struct EncoderConfig {
  std::string model_revision;   ///< "proxy-v1", "checkpoint:<sha256 of the file>" or "module:<sha256 of the module file>".
  std::string config_json;      ///< Canonical JSON of every artifact-changing setting.
  std::string config_hash;      ///< SHA-256 hex of config_json (-> encoder_config_hash).
  std::int64_t parameters = 0;  ///< Network parameter count (0 when unknown, e.g. TorchScript).
  std::string checkpoint;       ///< The checkpoint file loaded, when there is one.
};

/// Counters of a family's own internal batching (MOSS-TTS Local); all zero for the others.
struct InternalBatchStats {
  std::uint64_t batches = 0;  ///< Network calls made by the internal queue.
  std::uint64_t items = 0;    ///< Clips encoded through it.
  int largest = 0;            ///< Largest batch so far.
};

/// What the last decode of a thread produced (no samples): for the CLI's report.
struct LoadSummary {
  audio::LoadTimings timings;
  double seconds = 0;
  std::size_t samples = 0;
  int sample_rate = 0, source_rate = 0, source_channels = 0;
  std::string source_format, content_key;
  double gain_db = 0;
};

/// The hook of one family with its encoder config exposed.
class ModelHook : public EncoderHook {
 public:
  virtual const ModelInfo& info() const = 0;
  virtual const EncoderConfig& config() const = 0;
  virtual const EncoderOptions& options() const = 0;
  /// The last normalize_input made by the calling thread (the CLI's timing breakdown).
  virtual LoadSummary last_load() const = 0;
  virtual InternalBatchStats internal_batch_stats() const { return {}; }
  /// Samples at the model's rate: what a batch pads to its longest item.
  std::size_t batch_length(const EncodeInput& input) const override { return input.audio.samples.size(); }
  ArtifactParity compare_artifacts(const Artifact& batched, const Artifact& single) const override {
    return artifact_parity(batched, single);
  }
};

/// Builds the hook of `model_name` (network weights included). Throws Error(config) for an unknown
/// name, scale, dtype or device, or an unreadable module file.
std::shared_ptr<ModelHook> make_hook(std::string_view model_name, const EncoderOptions& options);

/// LibTorch's current intra-op thread count.
int torch_threads();

/// Sets LibTorch's intra-op threads and, where LibTorch runs on OpenBLAS, OpenBLAS's threads to the
/// same count, so that `threads: 1` means one thread per encode: OpenBLAS's own pool otherwise
/// stays at one thread per core and its idle workers spin beside the callers. Every encoder built calls it,
/// with LibTorch's current count when its `threads` is 0. `threads` > 0.
void set_torch_threads(int threads);

/// OpenBLAS's thread count, or 0 when LibTorch does not run on OpenBLAS.
int blas_threads();

/// The malloc this process runs on, LibTorch's CPU buffers included, from the library `malloc` resolves
/// to: "tcmalloc_minimal" (what the CLI and test_encoders link), "tcmalloc", "jemalloc" (preloaded), else "glibc".
std::string allocator_name();

/// Wall seconds of the first LibTorch call of this process (library loading, thread pools); 0 after.
double warm_up_torch();

}  // namespace refenc::encoders
