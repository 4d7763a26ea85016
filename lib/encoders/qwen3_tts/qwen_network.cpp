// Qwen3-TTS voice-clone prompt proxy in LibTorch: 12.5 Hz speech tokenizer (SEANet + transformer +
// split RVQ) and ECAPA-TDNN speaker encoder on a 24 kHz log-mel; layout in docs/models.md.
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"
#include "encoders/nn_blocks.hpp"

namespace refenc::encoders {

namespace {
namespace qwen {  // named: the networks share names (dims_for, kHop) and a unity build compiles them together

using namespace nn;

constexpr std::int64_t kRate = 24000;
constexpr std::int64_t kHop = 1920;
constexpr std::int64_t kKeptCodebooks = 16;
constexpr std::int64_t kStrides[4] = {4, 5, 6, 8};
constexpr std::int64_t kFft = 1024, kMelHop = 256, kMels = 128, kMelPad = 384;

struct QwenDims {
  std::vector<std::int64_t> channels;
  std::int64_t d_model, heads, mlp, layers, window = 250, codebook_dim, codebook_size = 2048;
  std::int64_t ecapa_channels, se_channels, attention_channels, enc_dim, res2net_scale = 8;
};

QwenDims dims_for(const std::string& scale) {
  if (scale == "full") return {{64, 128, 256, 512, 1024}, 512, 8, 2048, 8, 250, 256, 2048, 512, 128, 128, 1024};
  if (scale == "small") return {{16, 32, 64, 128, 256}, 128, 2, 512, 2, 250, 64, 2048, 128, 32, 32, 512};
  return {{4, 8, 16, 32, 64}, 32, 2, 128, 1, 250, 32, 2048, 32, 8, 16, 128};
}

/// SEANet residual block: ELU, conv k3 C -> C/2, ELU, conv k1 C/2 -> C, plus skip.
struct SeanetBlockImpl : torch::nn::Module {
  SeanetBlockImpl(SeededInit& init, std::int64_t c) {
    conv1 = register_module("conv1", CausalConv1d(init, c, std::max<std::int64_t>(c / 2, 1), 3));
    conv2 = register_module("conv2", CausalConv1d(init, std::max<std::int64_t>(c / 2, 1), c, 1));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return x + conv2->forward(map_elements(conv1->forward(map_elements(x, &elu_scalar)), &elu_scalar));
  }
  CausalConv1d conv1{nullptr}, conv2{nullptr};
};
TORCH_MODULE(SeanetBlock);

struct SpeechTokenizerImpl : torch::nn::Module {
  SpeechTokenizerImpl(SeededInit& init, const QwenDims& d) {
    const auto& ch = d.channels;
    stem = register_module("stem", CausalConv1d(init, 1, ch[0], 7));
    for (int b = 0; b < 4; ++b) {
      const std::string p = "block" + std::to_string(b) + "_";
      blocks.push_back(register_module(p + "res", SeanetBlock(init, ch[b])));
      downs.push_back(register_module(p + "down", CausalConv1d(init, ch[b], ch[b + 1], 2 * kStrides[b], kStrides[b])));
    }
    head = register_module("head", CausalConv1d(init, ch[4], d.d_model, 3));
    transformer =
        register_module("transformer", CausalTransformer(init, TransformerConfig{d.d_model, d.heads, d.mlp, d.layers,
                                                                                 d.window, false, false, 1e-2, false}));
    downsample = register_module("downsample", CausalConv1d(init, d.d_model, d.d_model, 4, 2));
    semantic = register_module(
        "semantic", ResidualVQ(init, d.d_model, std::vector<std::int64_t>{d.codebook_size}, d.codebook_dim, false));
    acoustic = register_module(
        "acoustic", ResidualVQ(init, d.d_model, std::vector<std::int64_t>(kKeptCodebooks - 1, d.codebook_size),
                               d.codebook_dim, false));
  }
  /// wave [B, 1, N] (N a multiple of 1920) -> codes [B, N / 1920, 16].
  torch::Tensor forward(const torch::Tensor& wave) {
    torch::Tensor x = stem->forward(wave);
    for (std::size_t b = 0; b < blocks.size(); ++b)
      x = downs[b]->forward(map_elements(blocks[b]->forward(x), &elu_scalar));
    x = head->forward(map_elements(x, &elu_scalar));
    x = transformer->forward(x.transpose(1, 2)).transpose(1, 2);
    torch::Tensor z = downsample->forward(x).transpose(1, 2);
    return at::cat({semantic->forward(z, 1), acoustic->forward(z, kKeptCodebooks - 1)}, -1);
  }
  CausalConv1d stem{nullptr}, head{nullptr}, downsample{nullptr};
  std::vector<SeanetBlock> blocks;
  std::vector<CausalConv1d> downs;
  CausalTransformer transformer{nullptr};
  ResidualVQ semantic{nullptr}, acoustic{nullptr};
};
TORCH_MODULE(SpeechTokenizer);

/// Conv ("same" padding) + ReLU + folded batch norm (per-channel affine).
struct TdnnImpl : torch::nn::Module {
  TdnnImpl(SeededInit& init, std::int64_t cin, std::int64_t cout, std::int64_t k, std::int64_t dilation = 1)
      : kernel(k), dil(dilation) {
    weight = register_parameter("weight", init.weight({cout, cin, k}, cin * k));
    bias = register_parameter("bias", torch::zeros({cout}));
    bn_w = register_parameter("bn_weight", torch::ones({cout}));
    bn_b = register_parameter("bn_bias", torch::zeros({cout}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const std::int64_t one = 1, pad = dil * (kernel - 1) / 2;
    torch::Tensor y = at::conv1d(x, weight, bias, at::IntArrayRef(one), at::IntArrayRef(pad), at::IntArrayRef(dil), 1);
    return at::relu(y) * bn_w.view({1, -1, 1}) + bn_b.view({1, -1, 1});
  }
  std::int64_t kernel, dil;
  torch::Tensor weight, bias, bn_w, bn_b;
};
TORCH_MODULE(Tdnn);

struct SeRes2BlockImpl : torch::nn::Module {
  SeRes2BlockImpl(SeededInit& init, std::int64_t c, std::int64_t se, std::int64_t scale, std::int64_t dilation)
      : scale(scale) {
    tdnn1 = register_module("tdnn1", Tdnn(init, c, c, 1));
    for (std::int64_t i = 1; i < scale; ++i)
      res2.push_back(register_module("res2_" + std::to_string(i), Tdnn(init, c / scale, c / scale, 3, dilation)));
    tdnn2 = register_module("tdnn2", Tdnn(init, c, c, 1));
    se1 = register_module("se1", Linear(init, c, se));
    se2 = register_module("se2", Linear(init, se, c));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = tdnn1->forward(x);
    std::vector<torch::Tensor> parts = y.chunk(scale, 1), outs{parts[0]};
    torch::Tensor prev;
    for (std::int64_t i = 1; i < scale; ++i) {
      prev = res2[i - 1]->forward(i == 1 ? parts[i] : parts[i] + prev);
      outs.push_back(prev);
    }
    y = tdnn2->forward(at::cat(outs, 1));
    torch::Tensor s = at::sigmoid(se2->forward(at::relu(se1->forward(y.mean(2)))));
    return y * s.unsqueeze(2) + x;
  }
  std::int64_t scale;
  Tdnn tdnn1{nullptr}, tdnn2{nullptr};
  std::vector<Tdnn> res2;
  Linear se1{nullptr}, se2{nullptr};
};
TORCH_MODULE(SeRes2Block);

struct EcapaImpl : torch::nn::Module {
  EcapaImpl(SeededInit& init, const QwenDims& d) {
    const std::int64_t c = d.ecapa_channels;
    stem = register_module("stem", Tdnn(init, kMels, c, 5));
    for (std::int64_t dil : {2, 3, 4})
      blocks.push_back(
          register_module("block" + std::to_string(dil), SeRes2Block(init, c, d.se_channels, d.res2net_scale, dil)));
    mfa = register_module("mfa", Tdnn(init, 3 * c, 3 * c, 1));
    att1 = register_module("asp_tdnn", Tdnn(init, 9 * c, d.attention_channels, 1));
    att2 = register_module("asp_conv", Linear(init, d.attention_channels, 3 * c));
    asp_bn_w = register_parameter("asp_bn_weight", torch::ones({6 * c}));
    asp_bn_b = register_parameter("asp_bn_bias", torch::zeros({6 * c}));
    fc = register_module("fc", Linear(init, 6 * c, d.enc_dim));
  }
  /// mel [1, 128, F] -> embedding [enc_dim].
  torch::Tensor forward(const torch::Tensor& mel) {
    torch::Tensor x = stem->forward(mel);
    std::vector<torch::Tensor> feats;
    for (auto& b : blocks) {
      x = b->forward(x);
      feats.push_back(x);
    }
    x = mfa->forward(at::cat(feats, 1));  // [1, 3C, F]
    const std::int64_t f = x.size(2);
    torch::Tensor mean = x.mean(2, true), sd = at::sqrt(x.var(2, false, true).clamp_min(1e-5));
    torch::Tensor ctx = at::cat({x, mean.expand({-1, -1, f}), sd.expand({-1, -1, f})}, 1);
    torch::Tensor a = at::tanh(att1->forward(ctx)).transpose(1, 2);      // [1, F, att]
    torch::Tensor w = at::softmax(att2->forward(a), 1).transpose(1, 2);  // [1, 3C, F]
    torch::Tensor mu = (w * x).sum(2);
    torch::Tensor sg = at::sqrt(((w * (x - mu.unsqueeze(2)).pow(2)).sum(2)).clamp_min(1e-5));
    torch::Tensor pooled = at::cat({mu, sg}, 1) * asp_bn_w + asp_bn_b;
    return fc->forward(pooled).squeeze(0);
  }
  Tdnn stem{nullptr}, mfa{nullptr}, att1{nullptr};
  std::vector<SeRes2Block> blocks;
  Linear att2{nullptr}, fc{nullptr};
  torch::Tensor asp_bn_w, asp_bn_b;
};
TORCH_MODULE(Ecapa);

/// Slaney-scale mel filterbank [n_mels, n_fft/2 + 1] with Slaney area normalisation.
torch::Tensor mel_filterbank(std::int64_t sr, std::int64_t n_fft, std::int64_t n_mels, double fmin, double fmax) {
  auto hz_to_mel = [](double f) {
    return f < 1000.0 ? f / (200.0 / 3.0) : 15.0 + std::log(f / 1000.0) / (std::log(6.4) / 27.0);
  };
  auto mel_to_hz = [](double m) {
    return m < 15.0 ? m * (200.0 / 3.0) : 1000.0 * std::exp((m - 15.0) * (std::log(6.4) / 27.0));
  };
  const std::int64_t bins = n_fft / 2 + 1;
  std::vector<double> hz(n_mels + 2);
  const double lo = hz_to_mel(fmin), hi = hz_to_mel(fmax);
  for (std::int64_t i = 0; i < n_mels + 2; ++i) hz[i] = mel_to_hz(lo + (hi - lo) * i / (n_mels + 1));
  torch::Tensor fb = torch::zeros({n_mels, bins}, torch::kFloat32);
  float* p = fb.data_ptr<float>();
  for (std::int64_t m = 0; m < n_mels; ++m) {
    const double enorm = 2.0 / (hz[m + 2] - hz[m]);
    for (std::int64_t k = 0; k < bins; ++k) {
      const double f = static_cast<double>(k) * sr / n_fft;
      const double up = (f - hz[m]) / (hz[m + 1] - hz[m]), down = (hz[m + 2] - f) / (hz[m + 2] - hz[m + 1]);
      p[m * bins + k] = static_cast<float>(std::max(0.0, std::min(up, down)) * enorm);
    }
  }
  return fb;
}

class QwenNetwork final : public Network {
 public:
  explicit QwenNetwork(const NetworkSettings& s) : device_(device_of(s.device)), dtype_(scalar_type_of(s.dtype)) {
    const QwenDims d = dims_for(s.scale);
    nlohmann::json dims = {
        {"tokenizer",
         {{"channels", d.channels},
          {"strides", {4, 5, 6, 8, 2}},
          {"d_model", d.d_model},
          {"heads", d.heads},
          {"mlp", d.mlp},
          {"layers", d.layers},
          {"window", d.window},
          {"codebook_size", d.codebook_size},
          {"codebook_dim", d.codebook_dim},
          {"kept_codebooks", kKeptCodebooks},
          {"nearest", "euclidean"}}},
        {"speaker",
         {{"channels", d.ecapa_channels},
          {"se", d.se_channels},
          {"attention", d.attention_channels},
          {"enc_dim", d.enc_dim},
          {"res2net_scale", d.res2net_scale},
          {"dilations", {2, 3, 4}}}},
        {"mel", {{"n_fft", kFft}, {"hop", kMelHop}, {"n_mels", kMels}, {"fmax", 12000}, {"pad", kMelPad}}},
        {"sample_rate", kRate},
        {"hop", kHop}};
    config_ = proxy_config("qwen3-tts", s, dims);
    SeededInit init(config_.weight_seed);
    tokenizer_ = SpeechTokenizer(init, d);
    ecapa_ = Ecapa(init, d);
    tokenizer_->eval();
    ecapa_->eval();
    tokenizer_->to(device_, dtype_);
    tokenizer_->semantic->to(torch::kFloat32);
    tokenizer_->acoustic->to(torch::kFloat32);
    ecapa_->to(device_, dtype_);
    mel_fb_ = mel_filterbank(kRate, kFft, kMels, 0.0, 12000.0).to(device_);
    window_ = torch::hann_window(kFft, torch::TensorOptions().dtype(torch::kFloat32)).to(device_);
    config_.config.parameters = count_parameters(*tokenizer_) + count_parameters(*ecapa_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    torch::InferenceMode guard;
    std::vector<NetworkOutput> out;
    for (const NetworkItem& item : items) {
      NetworkOutput o;
      torch::Tensor wave = pad_batch({item.samples}, 1, device_);  // [1, 1, N] float32
      o["ref_spk_embedding"] = to_host(speaker_embedding(wave));
      if (!item.x_vector_only) {
        const std::int64_t frames = (static_cast<std::int64_t>(item.samples.size()) + kHop - 1) / kHop;
        torch::Tensor padded = pad_batch({item.samples}, kHop, device_).to(dtype_);
        o["ref_code"] = to_host(tokenizer_->forward(padded)[0].narrow(0, 0, frames));
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  const EncoderConfig& config() const override { return config_.config; }

 private:
  torch::Tensor speaker_embedding(const torch::Tensor& wave) {
    torch::Tensor x = at::reflection_pad1d(wave, {kMelPad, kMelPad}).view({1, -1});
    torch::Tensor spec = at::stft(x, kFft, kMelHop, kFft, window_, false, true, true).abs();  // [1, 513, F]
    torch::Tensor mel = at::log(at::matmul(mel_fb_, spec).clamp_min(1e-5));                   // [1, 128, F]
    return ecapa_->forward(mel.to(dtype_));
  }

  torch::Device device_;
  torch::ScalarType dtype_;
  ProxyConfig config_;
  SpeechTokenizer tokenizer_{nullptr};
  Ecapa ecapa_{nullptr};
  torch::Tensor mel_fb_, window_;
};

}  // namespace qwen
}  // namespace

std::unique_ptr<Network> make_qwen_network(const NetworkSettings& settings) {
  if (!settings.checkpoint.empty())
    throw Error(ErrorKind::config, "qwen3-tts: --checkpoint is not supported yet (its network is a seeded proxy with "
                                   "refenc's own parameter names); export a TorchScript module and use --module");
  if (!settings.module_path.empty())
    return make_torchscript_network(settings, "qwen3-tts", {"ref_code", "ref_spk_embedding"});
  return std::make_unique<qwen::QwenNetwork>(settings);
}

}  // namespace refenc::encoders
