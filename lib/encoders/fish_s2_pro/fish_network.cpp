// FishAudio S2-Pro codec encoder proxy ("modded DAC" + RVQ) in LibTorch; layout in docs/models.md.
#include <nlohmann/json.hpp>

#include "encoders/network.hpp"
#include "encoders/network_common.hpp"
#include "encoders/nn_blocks.hpp"

namespace refenc::encoders {

namespace {
namespace fish {  // named: the networks share names (dims_for, kHop) and a unity build compiles them together

using namespace nn;

struct FishDims {
  std::vector<std::int64_t> channels;  ///< 5 widths: stem and after each downsampling conv.
  std::int64_t enc_layers, enc_heads, enc_ffn, enc_window = 512;
  std::int64_t pre_layers, pre_heads, pre_ffn, pre_window = 128;
  std::int64_t convnext_mult = 4;
  std::int64_t codebook_dim = 8;
};

FishDims dims_for(const std::string& scale) {
  if (scale == "full") return {{64, 128, 256, 512, 1024}, 4, 16, 3072, 512, 8, 16, 3072, 128};
  if (scale == "small") return {{16, 32, 64, 128, 256}, 2, 4, 768, 512, 2, 4, 768, 128};
  return {{4, 8, 16, 32, 64}, 1, 2, 192, 512, 1, 2, 192, 128};
}

constexpr std::int64_t kStrides[4] = {2, 4, 8, 8};
constexpr std::int64_t kHop = 2048;
constexpr std::int64_t kStages = 10;

struct ResidualUnitImpl : torch::nn::Module {
  ResidualUnitImpl(SeededInit& init, std::int64_t c, std::int64_t dilation) {
    alpha1 = register_parameter("alpha1", torch::ones({c}));
    conv1 = register_module("conv1", CausalConv1d(init, c, c, 7, 1, dilation));
    alpha2 = register_parameter("alpha2", torch::ones({c}));
    conv2 = register_module("conv2", CausalConv1d(init, c, c, 1));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return x + conv2->forward(snake(conv1->forward(snake(x, alpha1)), alpha2));
  }
  torch::Tensor alpha1, alpha2;
  CausalConv1d conv1{nullptr}, conv2{nullptr};
};
TORCH_MODULE(ResidualUnit);

/// ConvNeXt block on [B, C, T]: depthwise causal k7, LayerNorm, C -> mult*C GELU -> C, residual.
struct ConvNeXtImpl : torch::nn::Module {
  ConvNeXtImpl(SeededInit& init, std::int64_t c, std::int64_t mult) {
    dw = register_module("dw", CausalConv1d(init, c, c, 7, 1, 1, c));
    norm_w = register_parameter("norm_weight", torch::ones({c}));
    norm_b = register_parameter("norm_bias", torch::zeros({c}));
    up = register_module("up", Linear(init, c, mult * c));
    down = register_module("down", Linear(init, mult * c, c));
    gamma = register_parameter("gamma", torch::full({c}, 1e-2));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = dw->forward(x).transpose(1, 2);
    y = row_norm(y, norm_w, norm_b, false, 1e-6);
    y = down->forward(map_elements(up->forward(y), &gelu_scalar)) * gamma;
    return x + y.transpose(1, 2);
  }
  CausalConv1d dw{nullptr};
  torch::Tensor norm_w, norm_b, gamma;
  Linear up{nullptr}, down{nullptr};
};
TORCH_MODULE(ConvNeXt);

struct FishEncoderImpl : torch::nn::Module {
  FishEncoderImpl(SeededInit& init, const FishDims& d) {
    const auto& ch = d.channels;
    stem = register_module("stem", CausalConv1d(init, 1, ch[0], 7));
    for (int b = 0; b < 4; ++b) {
      const std::string p = "block" + std::to_string(b) + "_";
      std::vector<ResidualUnit> units;
      for (std::int64_t dil : {1, 3, 9})
        units.push_back(register_module(p + "unit" + std::to_string(dil), ResidualUnit(init, ch[b], dil)));
      blocks.push_back(units);
      alphas.push_back(register_parameter(p + "alpha", torch::ones({ch[b]})));
      downs.push_back(register_module(p + "down", CausalConv1d(init, ch[b], ch[b + 1], 2 * kStrides[b], kStrides[b])));
    }
    const std::int64_t dim = ch[4];
    encoder_transformer = register_module(
        "encoder_transformer", CausalTransformer(init, TransformerConfig{dim, d.enc_heads, d.enc_ffn, d.enc_layers,
                                                                         d.enc_window, true, true, 1e-2, false}));
    post_alpha = register_parameter("post_alpha", torch::ones({dim}));
    post_conv = register_module("post_conv", CausalConv1d(init, dim, dim, 3));
    for (int i = 0; i < 2; ++i) {
      const std::string p = "downsample" + std::to_string(i) + "_";
      q_downs.push_back(register_module(p + "conv", CausalConv1d(init, dim, dim, 2, 2)));
      q_convnext.push_back(register_module(p + "convnext", ConvNeXt(init, dim, d.convnext_mult)));
    }
    pre_transformer = register_module(
        "pre_transformer", CausalTransformer(init, TransformerConfig{dim, d.pre_heads, d.pre_ffn, d.pre_layers,
                                                                     d.pre_window, true, true, 1e-2, false}));
    std::vector<std::int64_t> sizes{4096};
    for (int i = 1; i < kStages; ++i) sizes.push_back(1024);
    quantizer = register_module("quantizer", ResidualVQ(init, dim, sizes, d.codebook_dim, true));
  }

  /// wave [B, 1, N] (N a multiple of 2048) -> codes [B, 10, N / 2048] int64.
  torch::Tensor forward(const torch::Tensor& wave) {
    torch::Tensor x = stem->forward(wave);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      for (auto& unit : blocks[b]) x = unit->forward(x);
      x = downs[b]->forward(snake(x, alphas[b]));
    }
    x = encoder_transformer->forward(x.transpose(1, 2)).transpose(1, 2);
    x = post_conv->forward(snake(x, post_alpha));
    for (std::size_t i = 0; i < q_downs.size(); ++i) x = q_convnext[i]->forward(q_downs[i]->forward(x));
    x = pre_transformer->forward(x.transpose(1, 2));
    return quantizer->forward(x, kStages).transpose(1, 2);
  }

  CausalConv1d stem{nullptr}, post_conv{nullptr};
  std::vector<std::vector<ResidualUnit>> blocks;
  std::vector<torch::Tensor> alphas;
  torch::Tensor post_alpha;
  std::vector<CausalConv1d> downs, q_downs;
  std::vector<ConvNeXt> q_convnext;
  CausalTransformer encoder_transformer{nullptr}, pre_transformer{nullptr};
  ResidualVQ quantizer{nullptr};
};
TORCH_MODULE(FishEncoder);

class FishNetwork final : public Network {
 public:
  explicit FishNetwork(const NetworkSettings& s) : device_(device_of(s.device)), dtype_(scalar_type_of(s.dtype)) {
    const FishDims d = dims_for(s.scale);
    nlohmann::json dims = {{"channels", d.channels},
                           {"strides", {2, 4, 8, 8}},
                           {"encoder_transformer", {d.enc_layers, d.enc_heads, d.enc_ffn, d.enc_window}},
                           {"pre_transformer", {d.pre_layers, d.pre_heads, d.pre_ffn, d.pre_window}},
                           {"convnext_mult", d.convnext_mult},
                           {"codebooks", {4096, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}},
                           {"codebook_dim", d.codebook_dim},
                           {"nearest", "cosine"},
                           {"sample_rate", 44100},
                           {"hop", kHop}};
    config_ = proxy_config("fish-s2-pro", s, dims);
    SeededInit init(config_.weight_seed);
    net_ = FishEncoder(init, d);
    net_->eval();
    net_->to(device_, dtype_);
    net_->quantizer->to(torch::kFloat32);
    config_.config.parameters = count_parameters(*net_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    // codes [B, 10, Tmax]; causal layers keep right padding out of every valid frame
    return encode_padded_codes(items, kHop, device_, dtype_, /*time_dim=*/1,
                               [this](const torch::Tensor& wave) { return net_->forward(wave); });
  }

  const EncoderConfig& config() const override { return config_.config; }

 private:
  torch::Device device_;
  torch::ScalarType dtype_;
  ProxyConfig config_;
  FishEncoder net_{nullptr};
};

}  // namespace fish
}  // namespace

std::unique_ptr<Network> make_fish_network(const NetworkSettings& settings) {
  if (!settings.module_path.empty()) return make_torchscript_network(settings, "fish-s2-pro", {"codes"});
  return std::make_unique<fish::FishNetwork>(settings);
}

}  // namespace refenc::encoders
