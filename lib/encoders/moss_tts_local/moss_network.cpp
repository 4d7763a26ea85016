// MOSS-Audio-Tokenizer (v1) encoder proxy in LibTorch: causal patch-transformer stages and a
// residual LFQ; layout in docs/models.md.
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"
#include "encoders/nn_blocks.hpp"

namespace refenc::encoders {

namespace {
namespace moss {  // named: the networks share names (dims_for, kHop) and a unity build compiles them together

using namespace nn;

constexpr std::int64_t kRate = 24000;
constexpr std::int64_t kHop = 1920;
constexpr std::int64_t kFirstPatch = 240;
constexpr std::int64_t kStagesQ = 32;

struct StageDims {
  std::int64_t dim, heads, ffn, layers, out, window;
};

struct MossDims {
  std::vector<StageDims> stages;  ///< 100, 50, 25 and 12.5 Hz.
  std::int64_t quant_dim, codebook_size = 1024, codebook_dim = 8;
};

MossDims dims_for(const std::string& scale) {
  // Attention reaches back 10 s at every stage rate.
  if (scale == "full")
    return {{{768, 12, 3072, 12, 384, 1000},
             {768, 12, 3072, 12, 384, 500},
             {768, 12, 3072, 12, 640, 250},
             {1280, 20, 5120, 32, 768, 125}},
            512};
  if (scale == "small")
    return {{{192, 3, 768, 2, 96, 1000},
             {192, 3, 768, 2, 96, 500},
             {192, 3, 768, 2, 160, 250},
             {320, 5, 1280, 4, 192, 125}},
            128};
  return {{{32, 2, 128, 1, 16, 1000}, {32, 2, 128, 1, 16, 500}, {32, 2, 128, 1, 32, 250}, {64, 4, 256, 2, 64, 125}},
          32};
}

struct MossEncoderImpl : torch::nn::Module {
  MossEncoderImpl(SeededInit& init, const MossDims& d) {
    std::int64_t in = kFirstPatch;
    for (std::size_t i = 0; i < d.stages.size(); ++i) {
      const StageDims& s = d.stages[i];
      const std::string p = "stage" + std::to_string(i) + "_";
      in_proj.push_back(in != s.dim ? register_module(p + "in", Linear(init, in, s.dim)) : Linear(nullptr));
      blocks.push_back(register_module(
          p + "transformer", CausalTransformer(init, TransformerConfig{s.dim, s.heads, s.ffn, s.layers, s.window, false,
                                                                       false, 1e-2, false})));
      out_proj.push_back(register_module(p + "out", Linear(init, s.dim, s.out)));
      in = 2 * s.out;
    }
    quant_in = register_module("quantizer_in", Linear(init, d.stages.back().out, d.quant_dim));
    quantizer = register_module(
        "quantizer_lfq",
        ResidualVQ(init, d.quant_dim, std::vector<std::int64_t>(kStagesQ, d.codebook_size), d.codebook_dim, true));
  }
  /// wave [B, 1, N] (N a multiple of 1920) -> codes [B, N / 1920, 32].
  torch::Tensor forward(const torch::Tensor& wave) {
    const std::int64_t b = wave.size(0);
    torch::Tensor x = wave.reshape({b, -1, kFirstPatch});  // [B, T100, 240]
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (i > 0) x = x.reshape({b, x.size(1) / 2, 2 * x.size(2)});  // patch 2: concatenate frame pairs
      if (in_proj[i]) x = in_proj[i]->forward(x);
      x = out_proj[i]->forward(blocks[i]->forward(x));
    }
    return quantizer->forward(quant_in->forward(x), kStagesQ);
  }
  std::vector<Linear> in_proj, out_proj;
  std::vector<CausalTransformer> blocks;
  Linear quant_in{nullptr};
  ResidualVQ quantizer{nullptr};
};
TORCH_MODULE(MossEncoder);

class MossNetwork final : public Network {
 public:
  explicit MossNetwork(const NetworkSettings& s) : device_(device_of(s.device)), dtype_(scalar_type_of(s.dtype)) {
    const MossDims d = dims_for(s.scale);
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& st : d.stages) stages.push_back({st.dim, st.heads, st.ffn, st.layers, st.out, st.window});
    nlohmann::json dims = {{"stages", stages},
                           {"patches", {240, 2, 2, 2}},
                           {"quant_dim", d.quant_dim},
                           {"codebook_size", d.codebook_size},
                           {"codebook_dim", d.codebook_dim},
                           {"quantizers", kStagesQ},
                           {"nearest", "cosine"},
                           {"sample_rate", kRate},
                           {"hop", kHop},
                           {"loudness_dbfs", -20.0},
                           {"max_gain_db", 3.0}};
    config_ = proxy_config("moss-tts-local", s, dims);
    SeededInit init(config_.weight_seed);
    net_ = MossEncoder(init, d);
    net_->eval();
    net_->to(device_, dtype_);
    net_->quant_in->to(torch::kFloat32);
    net_->quantizer->to(torch::kFloat32);
    config_.config.parameters = count_parameters(*net_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    // codes [B, Tmax, 32]; causal layers keep right padding out of every valid frame
    return encode_padded_codes(items, kHop, device_, dtype_, /*time_dim=*/0,
                               [this](const torch::Tensor& wave) { return net_->forward(wave); });
  }

  const EncoderConfig& config() const override { return config_.config; }

 private:
  torch::Device device_;
  torch::ScalarType dtype_;
  ProxyConfig config_;
  MossEncoder net_{nullptr};
};

}  // namespace moss
}  // namespace

std::unique_ptr<Network> make_moss_network(const NetworkSettings& settings) {
  if (!settings.checkpoint.empty())
    throw Error(ErrorKind::config, "moss-tts-local: --checkpoint is not supported yet (its network is a seeded proxy with "
                                   "refenc's own parameter names); export a TorchScript module and use --module");
  if (!settings.module_path.empty()) return make_torchscript_network(settings, "moss-tts-local", {"codes"});
  return std::make_unique<moss::MossNetwork>(settings);
}

}  // namespace refenc::encoders
