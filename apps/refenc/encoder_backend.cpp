// The encoders' backend: encoders::make_hook per model, services over store::DiskTier for warm-disk,
// and over store::TierChain (disk, then the shared RedisTier) for warm-shared.
#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "encoder_backend.hpp"
#include "encoders/encoder_hook.hpp"
#include "encoders/network.hpp"
#include "modelled_network.hpp"
#include "python_backend.hpp"
#include "profile/device/calibration_presets.hpp"
#include "store/disk_tier.hpp"
#include "store/redis_endpoint.hpp"
#include "store/tier_chain.hpp"

namespace refenc::profile {
namespace {

class EncoderBackend final : public ModelBackend {
 public:
  explicit EncoderBackend(const ModelSpec& spec) {
    encoders::EncoderOptions o;
    o.scale = spec.encoder.scale;
    o.dtype = spec.encoder.dtype;
    o.device = spec.encoder.device;
    o.module_path = spec.encoder.module_path;
    o.checkpoint = spec.encoder.checkpoint;
    o.threads = spec.encoder.threads;
    if (spec.encoder.device == "modelled") {
      make_modelled(spec, o);
      return;
    }
    hook_ = encoders::make_hook(spec.name, o);
    const encoders::ModelInfo& mi = describe_hook();
    if (mi.has_internal_batching)
      info_.eligibility.reason =
          "has its own batched encoder inside the model's stage, not migrated to the generic batching surface";
    else if (!info_.can_encode_batch)
      info_.eligibility.reason = "no safe batch primitive for the whole prompt: stays M4a-only";
    else
      info_.eligibility.reason =
          "hook encodes a batch of different references (CPU float32: each clip alone at its own length, exact; "
          "other devices: one zero-padded batch, causal and length-respecting)";
    info_.real_weights = !spec.encoder.module_path.empty() || !spec.encoder.checkpoint.empty();
    info_.scale = spec.encoder.scale;
    const std::string& revision = hook_->config().model_revision;
    info_.evidence_grade = !spec.encoder.module_path.empty() ? "real module " + spec.encoder.module_path
                           : !spec.encoder.checkpoint.empty()
                               ? "real weights " + hook_->config().checkpoint + " (sha256 " +
                                     revision.substr(revision.find(':') + 1, 12) + ")"
                               : "proxy scale " + spec.encoder.scale + " (seeded weights)";
    encoders::warm_up_torch();
  }

  /// Fills info_ from the hook: name, rates, whether it batches; returns the hook's model info.
  const encoders::ModelInfo& describe_hook() {
    const encoders::ModelInfo& mi = hook_->info();
    info_.name = mi.name;
    info_.sample_rate = mi.sample_rate;
    info_.frame_rate = mi.frame_rate;
    info_.can_encode_batch = hook_->can_encode_batch();
    info_.has_internal_batching = mi.has_internal_batching;
    return mi;
  }

  /// A hook over a modelled device costed by the spec's calibration (no LibTorch work at all).
  void make_modelled(const ModelSpec& spec, const encoders::EncoderOptions& o) {
    auto surface = std::make_shared<const CostSurface>(resolve_calibration(spec.encoder.calibration, ""));
    const Calibration& c = surface->calibration();
    ModelledDevice device = make_modelled_device(c);
    streams_ = device.parallel;
    const bool batches = c.batch_sizes.size() > 1;
    hook_ = encoders::make_hook_over(spec.name, o, make_modelled_network(spec.name, o, surface, device), batches);
    const encoders::ModelInfo& mi = describe_hook();
    if (mi.has_internal_batching)
      info_.eligibility.reason = "modelled device: its own internal batching costed by the calibration's batch surface";
    else if (info_.can_encode_batch && !mi.can_encode_batch)
      info_.eligibility.reason =
          "modelled device, what-if: the real hook has no batch primitive; batches cost what the calibration's "
          "batch surface says";
    else if (info_.can_encode_batch)
      info_.eligibility.reason = "modelled device: batches cost what the calibration's batch surface says";
    else
      info_.eligibility.reason = "modelled device: the calibration has no batch sizes above 1 (M4a only)";
    info_.real_weights = false;
    info_.scale = spec.encoder.scale;
    info_.evidence_grade = c.evidence_grade();
    info_.calibration = CalibrationRef{
        c.name,   c.path,         c.sha256,
        c.origin, c.context.host, c.context.device_name.empty() ? c.context.device : c.context.device_name,
        c.source};
  }

  const ModelEntry& info() const override { return info_; }
  int intra_op_threads() const override { return streams_ > 0 ? 0 : encoders::torch_threads(); }
  int device_streams() const override { return streams_; }
  bool set_intra_op_threads(int threads) override {
    if (streams_ > 0) return false;  // a modelled device has no intra-op threads
    encoders::set_torch_threads(threads);
    return true;
  }

  std::unique_ptr<ServiceHandle> make_service(const ArmSpec& arm, const CacheSpec& cache,
                                              const std::string& tier_root) override {
    auto service =
        std::make_shared<encoders::EncodeService>(hook_, service_options(arm, cache), profile_service_tier(cache, tier_root));
    return make_service_handle(service, [](const WorkItem& w) {
      encoders::EncodeRequest r;
      if (w.reference && w.reference->wav)
        r.source = audio::ReferenceSource::from_bytes(*w.reference->wav);
      else if (w.reference)
        r.source = audio::ReferenceSource::from_path(w.reference->path);
      r.text = w.ref_text;
      return r;
    });
  }

 private:
  std::shared_ptr<encoders::ModelHook> hook_;
  ModelEntry info_;
  int streams_ = 0;  ///< A modelled device's streams; 0 for the real encoder.
};

}  // namespace

std::shared_ptr<SecondTier<Artifact>> profile_service_tier(const CacheSpec& cache, const std::string& tier_root) {
  std::shared_ptr<SecondTier<Artifact>> tier;
  if (!tier_root.empty()) tier = store::open_disk_tier({.root = tier_root});
  if (!cache.shared_url.empty()) {
    auto shared = open_profile_shared_tier(cache);
    shared->warm_up();  // a replica's pool is open before its requests come, not by them
    tier = std::make_shared<store::TierChain>(tier, std::move(shared));
  }
  return tier;
}

std::shared_ptr<store::RedisTier> open_profile_shared_tier(const CacheSpec& cache) {
  store::RedisTierOptions o;
  o.url = cache.shared_url;
  o.prefix = cache.shared_prefix;
  o.ttl = profile_shared_ttl;
  return store::open_redis_tier(std::move(o));
}

void validate_shared_cache(const Manifest& manifest) {
  const std::string& url = manifest.cache.shared;
  if (url.empty() || url == local_shared_cache) return;
  const std::string field = manifest.path + ": cache.shared: ";
  try {
    const store::RedisEndpoint e = store::RedisEndpoint::parse(url);
    if (!e.is_loopback() && !e.authenticates())
      throw Error(ErrorKind::bad_input, field + e.display() + " is not on this host and has no password: set $" +
                                            store::kSharedCachePasswordEnv + " (or use \"local\")");
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::bad_input) throw;
    throw Error(ErrorKind::bad_input, field + e.what());
  }
}

BackendFactory encoder_backend_factory() {
  return [](const ModelSpec& spec) -> std::unique_ptr<ModelBackend> {
    if (!spec.encoder.python.empty()) return make_python_backend(spec);
    return std::make_unique<EncoderBackend>(spec);
  };
}

void validate_encoder_models(const Manifest& manifest) {
  for (std::size_t i = 0; i < manifest.models.size(); ++i) {
    const ModelSpec& spec = manifest.models[i];
    const std::string field = manifest.path + ": models[" + std::to_string(i) + "]";
    if (!spec.encoder.python.empty()) {
      if (!python_hooks_available())
        throw Error(ErrorKind::bad_input, field + ".encoder.python: this refenc was built without Python "
                                                  "(configure with -DREFENC_PYTHON=ON, scripts/setup.sh installs it)");
      continue;  // the hook names its own model
    }
    const encoders::ModelInfo* info = nullptr;
    try {
      info = &encoders::model_info(spec.name);
    } catch (const Error& e) {
      throw Error(ErrorKind::bad_input, field + ".name: " + e.what());
    }
    if (spec.encoder.module_path.empty() &&
        std::find(info->scales.begin(), info->scales.end(), spec.encoder.scale) == info->scales.end())
      throw Error(ErrorKind::bad_input, field + ".encoder.scale: '" + spec.encoder.scale + "' is not one of " +
                                            spec.name + "'s scales (full, small, tiny)");
    if (spec.encoder.dtype != "float32" && spec.encoder.dtype != "bfloat16")
      throw Error(ErrorKind::bad_input,
                  field + ".encoder.dtype: '" + spec.encoder.dtype + "' (expected float32 or bfloat16)");
  }
}

}  // namespace refenc::profile
