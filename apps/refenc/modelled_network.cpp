#include "modelled_network.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/sha256.hpp"
#include "core/splitmix64.hpp"

namespace refenc {
namespace {

/// FNV-1a over the clip's sample bytes: the seed of its artifact's values.
std::uint64_t clip_seed(std::span<const float> samples) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(samples.data());
  for (std::size_t i = 0; i < samples.size_bytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

HostTensor codes(SplitMix64& v, std::vector<std::int64_t> shape, const std::vector<std::int64_t>& row_range, int rows_dim) {
  HostTensor t(DType::int64, shape);
  auto out = t.values<std::int64_t>();
  const std::int64_t cols = shape[1];
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::size_t row = rows_dim == 0 ? i / static_cast<std::size_t>(cols) : i % static_cast<std::size_t>(cols);
    std::int64_t range = row_range[std::min(row, row_range.size() - 1)];
    out[i] = static_cast<std::int64_t>(v.next() % static_cast<std::uint64_t>(range));
  }
  return t;
}

class ModelledNetwork final : public encoders::Network {
 public:
  ModelledNetwork(const encoders::ModelInfo& info, const encoders::EncoderOptions& options,
                  std::shared_ptr<const profile::CostSurface> surface, profile::ModelledDevice device)
      : info_(info), scale_(options.scale), surface_(std::move(surface)), device_(std::move(device)) {
    const profile::Calibration& c = surface_->calibration();
    nlohmann::json j = {{"modelled", c.name}, {"calibration_sha256", c.sha256}, {"scale", scale_}};
    config_.model_revision = "modelled:" + (c.sha256.empty() ? c.name : c.sha256.substr(0, 16));
    config_.config_json = j.dump();
    config_.config_hash = sha256_hex(config_.config_json);
  }

  std::vector<encoders::NetworkOutput> encode(std::span<const encoders::NetworkItem> items) override {
    std::size_t longest = 0;
    std::uint64_t content = 0;  // the batch's content, whatever its order: the seed of its spread draw
                                // (the same clips, the same draw)
    std::vector<std::uint64_t> seeds;
    for (const auto& it : items) {
      longest = std::max(longest, it.samples.size());
      seeds.push_back(clip_seed(it.samples));
      content += splitmix64(seeds.back());
    }
    const double seconds = static_cast<double>(longest) / info_.sample_rate;
    const int batch = static_cast<int>(items.size());
    device_.run(*surface_, batch, seconds, content);
    std::vector<encoders::NetworkOutput> out;
    out.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) out.push_back(artifact(items[i], seeds[i]));
    return out;
  }

  const encoders::EncoderConfig& config() const override { return config_; }

 private:
  encoders::NetworkOutput artifact(const encoders::NetworkItem& it, std::uint64_t seed) const {
    SplitMix64 v{seed};
    const std::int64_t frames = info_.frames_for(static_cast<std::int64_t>(it.samples.size()));
    encoders::NetworkOutput o;
    if (info_.name == "fish-s2-pro") {
      o["codes"] = codes(v, {10, frames}, {4096, 1024}, 0);
    } else if (info_.name == "qwen3-tts") {
      if (!it.x_vector_only) o["ref_code"] = codes(v, {frames, 16}, {2048}, 1);
      const std::int64_t dim = scale_ == "full" ? 1024 : scale_ == "small" ? 512 : 128;
      HostTensor e(DType::float32, {dim});
      for (float& x : e.values<float>())
        x = static_cast<float>(static_cast<double>(v.next() >> 11) / 4503599627370496.0 - 1.0);
      o["ref_spk_embedding"] = std::move(e);
    } else {
      o["codes"] = codes(v, {frames, 32}, {1024}, 1);
    }
    return o;
  }

  const encoders::ModelInfo& info_;
  std::string scale_;
  std::shared_ptr<const profile::CostSurface> surface_;
  profile::ModelledDevice device_;
  encoders::EncoderConfig config_;
};

}  // namespace

std::unique_ptr<encoders::Network> make_modelled_network(std::string_view model_name,
                                                         const encoders::EncoderOptions& options,
                                                         std::shared_ptr<const profile::CostSurface> surface,
                                                         profile::ModelledDevice device) {
  return std::make_unique<ModelledNetwork>(encoders::model_info(model_name), options, std::move(surface),
                                           std::move(device));
}

}  // namespace refenc
