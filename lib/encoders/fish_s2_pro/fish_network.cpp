// FishAudio S2-Pro codec encoder and quantizer in LibTorch: fish-speech's modded DAC encoder
// (`fish_speech/models/dac/modded_dac.py`) and `DownsampleResidualVectorQuantize` (`rvq.py`, with
// descript-audio-codec's `ResidualVectorQuantize`), configured as `fish_speech/configs/modded_dac_vq.yaml`.
//
// The parameter tree is the published `codec.pth`'s, names and shapes exactly; the checkpoint's decoder,
// upsampler and post-module are accepted and not loaded. Each op is the one upstream calls, in its order
// and on the same shapes (a clip alone, right-padded to a multiple of 2048 samples), so that on the CPU in
// float32 the codes are upstream's bit for bit (tests/encoders/fish_checkpoint_test.cpp). The seeded
// proxies are this network with seeded weights at reduced widths and depths (docs/encoders.md).
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <optional>

#include "encoders/checkpoint.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"

namespace refenc::encoders {

namespace {
namespace fish {  // named: the networks share names and a unity build compiles them together

/// The yaml's settings that a scale changes; everything else is fixed by the published config.
struct FishDims {
  std::int64_t encoder_dim;  ///< Stem width; doubled by each of the 4 encoder blocks (latent = 16x).
  std::int64_t encoder_layers;  ///< Transformer layers of the last encoder block (window 512, heads dim/64).
  std::int64_t pre_layers, pre_heads, pre_ffn;  ///< The quantizer's pre-module transformer (window 128).
  std::int64_t latent() const { return encoder_dim * 16; }
};

FishDims dims_for(const std::string& scale) {
  if (scale == "full") return {64, 4, 8, 16, 3072};
  if (scale == "small") return {16, 2, 2, 4, 768};
  return {4, 1, 1, 1, 192};
}

constexpr std::int64_t kRates[4] = {2, 4, 8, 8};
constexpr std::int64_t kFrame = 2048;  // DAC.encode pads to hop (512) x 4
constexpr std::int64_t kHeadDim = 64;
constexpr std::int64_t kEncoderWindow = 512, kPreWindow = 128;
constexpr std::int64_t kCodebookDim = 8, kCodebooks = 9, kCodebookSize = 1024, kSemanticSize = 4096;
constexpr double kNormEps = 1e-5;

/// Parts of codec.pth that encoding does not run.
const std::vector<std::string> kIgnored = {"decoder.", "quantizer.upsample.", "quantizer.post_module."};

// ---- the parameter tree ------------------------------------------------------------------------------

struct Tree {
  std::vector<TensorSpec> specs;
  void add(std::string name, std::vector<std::int64_t> shape) { specs.push_back({std::move(name), std::move(shape)}); }
  /// CausalConvNet (weight-normalised through parametrizations when `wn`).
  void conv(const std::string& p, std::int64_t cin, std::int64_t cout, std::int64_t k, std::int64_t groups = 1,
            bool wn = true) {
    if (wn) {
      add(p + ".conv.parametrizations.weight.original0", {cout, 1, 1});
      add(p + ".conv.parametrizations.weight.original1", {cout, cin / groups, k});
    } else {
      add(p + ".conv.weight", {cout, cin / groups, k});
    }
    add(p + ".conv.bias", {cout});
  }
  void snake(const std::string& p, std::int64_t c) { add(p + ".alpha", {1, c, 1}); }
  void transformer(const std::string& p, std::int64_t dim, std::int64_t heads, std::int64_t ffn, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::string l = p + ".layers." + std::to_string(i);
      add(l + ".attention.wqkv.weight", {3 * heads * kHeadDim, dim});
      add(l + ".attention.wo.weight", {dim, heads * kHeadDim});
      add(l + ".feed_forward.w1.weight", {ffn, dim});
      add(l + ".feed_forward.w3.weight", {ffn, dim});
      add(l + ".feed_forward.w2.weight", {dim, ffn});
      add(l + ".ffn_norm.weight", {dim});
      add(l + ".attention_norm.weight", {dim});
      add(l + ".attention_layer_scale.gamma", {dim});
      add(l + ".ffn_layer_scale.gamma", {dim});
    }
    add(p + ".norm.weight", {dim});
  }
  /// dac's VectorQuantize: WNConv1d (torch.nn.utils.weight_norm: weight_g, weight_v) in and out, codebook.
  void vq(const std::string& p, std::int64_t dim, std::int64_t size) {
    add(p + ".in_proj.weight_g", {kCodebookDim, 1, 1});
    add(p + ".in_proj.weight_v", {kCodebookDim, dim, 1});
    add(p + ".in_proj.bias", {kCodebookDim});
    add(p + ".out_proj.weight_g", {dim, 1, 1});
    add(p + ".out_proj.weight_v", {dim, kCodebookDim, 1});
    add(p + ".out_proj.bias", {dim});
    add(p + ".codebook.weight", {size, kCodebookDim});
  }
};

std::vector<TensorSpec> parameter_tree(const FishDims& d) {
  Tree t;
  std::int64_t width = d.encoder_dim;
  t.conv("encoder.block.0", 1, width, 7);
  for (int b = 0; b < 4; ++b) {
    const std::string p = "encoder.block." + std::to_string(b + 1) + ".block.";
    const std::int64_t c = width;
    width *= 2;
    for (int u = 0; u < 3; ++u) {
      const std::string r = p + std::to_string(u) + ".block.";
      t.snake(r + "0", c);
      t.conv(r + "1", c, c, 7);
      t.snake(r + "2", c);
      t.conv(r + "3", c, c, 1);
    }
    t.snake(p + "3", c);
    t.conv(p + "4", c, width, 2 * kRates[b]);
    if (b == 3 && d.encoder_layers > 0) t.transformer(p + "5", width, width / kHeadDim, width * 3, d.encoder_layers);
  }
  t.snake("encoder.block.5", width);
  t.conv("encoder.block.6", width, d.latent(), 3);
  const std::int64_t dim = d.latent();
  for (int i = 0; i < 2; ++i) {
    const std::string p = "quantizer.downsample." + std::to_string(i);
    t.conv(p + ".0", dim, dim, 2, 1, false);
    t.conv(p + ".1.dwconv", dim, dim, 7, dim, false);
    t.add(p + ".1.norm.weight", {dim});
    t.add(p + ".1.norm.bias", {dim});
    t.add(p + ".1.pwconv1.weight", {4 * dim, dim});
    t.add(p + ".1.pwconv1.bias", {4 * dim});
    t.add(p + ".1.pwconv2.weight", {dim, 4 * dim});
    t.add(p + ".1.pwconv2.bias", {dim});
    t.add(p + ".1.gamma", {dim});
  }
  t.transformer("quantizer.pre_module", dim, d.pre_heads, d.pre_ffn, d.pre_layers);
  t.vq("quantizer.semantic_quantizer.quantizers.0", dim, kSemanticSize);
  for (int i = 0; i < kCodebooks; ++i) t.vq("quantizer.quantizer.quantizers." + std::to_string(i), dim, kCodebookSize);
  return std::move(t.specs);
}

using nn::ends_with;

/// Seeded proxy weights for `tree`: codebooks N(0, 1), norms and Snake alphas 1, biases 0, LayerScale gamma
/// 1e-2, the other weights N(0, 1/fan_in), weight-norm gains |v| (`nn::seed_tree`).
WeightMap seeded_weights(const std::vector<TensorSpec>& tree, const std::string& seed) {
  nn::SeededInit init(seed);
  WeightMap w;
  nn::seed_tree(tree, init, [](const std::string& n) {
    if (ends_with(n, ".alpha") || ends_with(n, "norm.weight")) return nn::SeededKind::ones;
    if (ends_with(n, "gamma")) return nn::SeededKind::layer_scale;
    if (ends_with(n, "bias")) return nn::SeededKind::zeros;
    if (ends_with(n, "codebook.weight")) return nn::SeededKind::normal;
    return nn::SeededKind::weight;
  }, w);
  return w;
}

// ---- the network -------------------------------------------------------------------------------------

/// CausalConvNet: left padding kernel - stride, right padding to whole frames, then conv1d.
struct Conv {
  at::Tensor weight, bias;
  std::int64_t stride = 1, dilation = 1, groups = 1;
  at::Tensor operator()(const at::Tensor& x) const {
    const std::int64_t k = (weight.size(2) - 1) * dilation + 1, pad = k - stride, length = x.size(-1);
    const double frames = static_cast<double>(length - k + pad) / static_cast<double>(stride) + 1;
    const std::int64_t ideal = (static_cast<std::int64_t>(std::ceil(frames)) - 1) * stride + (k - pad);
    at::Tensor padded = at::constant_pad_nd(x, {pad, ideal - length}, 0);
    const std::int64_t no_pad = 0;
    return at::conv1d(padded, weight, bias, at::IntArrayRef(stride), at::IntArrayRef(no_pad), at::IntArrayRef(dilation),
                      groups)
        .contiguous();
  }
};

/// descript-audio-codec's Snake1d: x + 1 / (alpha + 1e-9) * sin(alpha x)^2.
at::Tensor snake(const at::Tensor& x, const at::Tensor& alpha) {
  return x + (alpha + 1e-9).reciprocal() * at::sin(alpha * x).pow(2);
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) {
  at::Tensor f = x.to(at::kFloat);
  return (f * at::rsqrt(at::mean(f * f, {-1}, true) + kNormEps)).to(x.scalar_type()) * weight;
}

/// modded_dac's precompute_freqs_cis for positions [0, length): cos and sin pairs, rounded to bfloat16.
at::Tensor rope_table(std::int64_t length, const at::Device& device) {
  at::Tensor exponents = at::arange(0, kHeadDim, 2).slice(0, 0, kHeadDim / 2).to(at::kFloat) / kHeadDim;
  at::Tensor freqs = at::reciprocal(at::pow(10000, exponents));
  freqs = at::outer(at::arange(length), freqs);
  at::Tensor cis = at::polar(at::ones_like(freqs), freqs);
  return at::stack({at::real(cis), at::imag(cis)}, -1).to(at::kBFloat16).to(device);
}

/// modded_dac's apply_rotary_emb: x [B, T, H, D] rotated pairwise (x[2i], x[2i+1]) by `table` [T, D/2, 2].
at::Tensor rotate(const at::Tensor& x, const at::Tensor& table) {
  at::Tensor xs = x.to(at::kFloat).reshape({x.size(0), x.size(1), x.size(2), -1, 2});
  at::Tensor f = table.view({1, xs.size(1), 1, xs.size(3), 2});
  at::Tensor x0 = xs.select(-1, 0), x1 = xs.select(-1, 1), f0 = f.select(-1, 0), f1 = f.select(-1, 1);
  return at::stack({x0 * f0 - x1 * f1, x1 * f0 + x0 * f1}, -1).flatten(3).to(x.scalar_type());
}

/// WindowLimitedTransformer (causal): pre-norm RMSNorm blocks with LayerScale, RoPE attention over the
/// last `window` frames, SwiGLU feed-forward, a final RMSNorm; [B, C, T] in and out.
struct Transformer {
  struct Layer {
    at::Tensor wqkv, wo, w1, w2, w3, ffn_norm, attention_norm, attention_scale, ffn_scale;
  };
  std::vector<Layer> layers;
  at::Tensor norm;
  std::int64_t heads = 1, window = 0;

  at::Tensor operator()(const at::Tensor& channels_first) const {
    at::Tensor x = channels_first.transpose(1, 2);
    const std::int64_t b = x.size(0), t = x.size(1);
    const at::Tensor table = rope_table(t, x.device());
    at::Tensor row = at::arange(t, at::TensorOptions(x.device())).view({-1, 1}), col = at::arange(t, row.options());
    const at::Tensor mask = (col <= row).logical_and(col >= (row - window + 1).clamp_min(0)).view({1, 1, t, t});
    const double scale = 1.0 / std::sqrt(static_cast<double>(kHeadDim));
    const std::int64_t width = heads * kHeadDim;
    for (const Layer& l : layers) {
      std::vector<at::Tensor> qkv = at::linear(rms_norm(x, l.attention_norm), l.wqkv).split(width, -1);
      at::Tensor q = rotate(qkv[0].view({b, t, heads, kHeadDim}), table).transpose(1, 2);
      at::Tensor k = rotate(qkv[1].view({b, t, heads, kHeadDim}), table).transpose(1, 2);
      at::Tensor v = qkv[2].view({b, t, heads, kHeadDim}).transpose(1, 2);
      at::Tensor s = at::matmul(q, k.transpose(-2, -1)) * scale;
      s = at::softmax(s.masked_fill(mask.logical_not(), -INFINITY), -1);
      at::Tensor y = at::matmul(s, v).transpose(1, 2).contiguous().view({b, t, width});
      at::Tensor h = x + at::linear(y, l.wo) * l.attention_scale;
      at::Tensor f = rms_norm(h, l.ffn_norm);
      f = at::linear(at::silu(at::linear(f, l.w1)) * at::linear(f, l.w3), l.w2);
      x = h + f * l.ffn_scale;
    }
    return rms_norm(x, norm).transpose(1, 2);
  }
};

/// ConvNeXtBlock: depthwise causal conv k7, LayerNorm (eps 1e-6), Linear 4x, GELU, Linear, gamma, residual.
struct ConvNeXt {
  Conv dwconv;
  at::Tensor norm_w, norm_b, pw1_w, pw1_b, pw2_w, pw2_b, gamma;
  at::Tensor operator()(const at::Tensor& input) const {
    at::Tensor x = dwconv(input).permute({0, 2, 1});
    x = at::layer_norm(x, {x.size(-1)}, norm_w, norm_b, 1e-6);
    x = at::linear(at::gelu(at::linear(x, pw1_w, pw1_b)), pw2_w, pw2_b);
    return input + (gamma * x).permute({0, 2, 1});
  }
};

/// dac's VectorQuantize: in-projection, cosine nearest codebook entry, out-projection of the entry.
struct VectorQuantize {
  at::Tensor in_w, in_b, out_w, out_b, codebook, codebook_normalised;
  /// residual [B, D, T] -> (codes [B, T], the quantised residual [B, D, T]).
  std::pair<at::Tensor, at::Tensor> operator()(const at::Tensor& residual) const {
    const at::Tensor z_e = at::conv1d(residual, in_w, in_b);
    const std::int64_t b = z_e.size(0), t = z_e.size(2);
    at::Tensor e = z_e.permute({0, 2, 1}).reshape({b * t, z_e.size(1)});
    e = e / e.norm(2, {1}, true).clamp_min(1e-12).expand_as(e);
    const at::Tensor& c = codebook_normalised;
    const at::Tensor dist = e.pow(2).sum({1}, true) - at::matmul(e, c.t()) * 2 + c.pow(2).sum({1}, true).t();
    const at::Tensor codes = std::get<1>(at::max(-dist, 1)).reshape({b, t});
    const at::Tensor z_q = at::embedding(codebook, codes).transpose(1, 2);
    return {codes, at::conv1d(z_e + (z_q - z_e), out_w, out_b)};
  }
};

struct FishCodec {
  Conv stem, post_conv;
  struct Block {
    std::vector<std::array<at::Tensor, 2>> alphas;  // per residual unit
    std::vector<std::array<Conv, 2>> convs;
    at::Tensor alpha;
    Conv down;
    std::optional<Transformer> transformer;
  };
  std::vector<Block> blocks;
  at::Tensor post_alpha;
  std::vector<std::pair<Conv, ConvNeXt>> downsample;
  Transformer pre_module;
  std::vector<VectorQuantize> quantizers;  // semantic first, then the 9 residual stages

  /// wave [B, 1, N], N a multiple of 2048 -> codes [B, 10, N / 2048] int64.
  at::Tensor operator()(const at::Tensor& wave) const {
    at::Tensor x = stem(wave);
    for (const Block& b : blocks) {
      for (std::size_t u = 0; u < b.convs.size(); ++u)
        x = x + b.convs[u][1](snake(b.convs[u][0](snake(x, b.alphas[u][0])), b.alphas[u][1]));
      x = b.down(snake(x, b.alpha));
      if (b.transformer) x = (*b.transformer)(x);
    }
    x = post_conv(snake(x, post_alpha));
    for (const auto& [conv, convnext] : downsample) x = convnext(conv(x));
    const at::Tensor z = pre_module(x).to(at::kFloat);
    auto [semantic, semantic_q] = quantizers[0](z);
    std::vector<at::Tensor> codes{semantic};
    at::Tensor residual = z - semantic_q;
    for (std::size_t i = 1; i < quantizers.size(); ++i) {
      auto [c, q] = quantizers[i](residual);
      codes.push_back(c);
      residual = residual - q;
    }
    return at::stack(codes, 1);
  }
};

/// The network over bound weights (names as parameter_tree), weight norms folded as upstream computes them.
FishCodec build(const WeightMap& w, const FishDims& d, const at::Device& device, at::ScalarType dtype) {
  auto get = [&](const std::string& n) { return w.at(n).to(device, dtype); };
  auto conv = [&](const std::string& p, std::int64_t stride = 1, std::int64_t dilation = 1, std::int64_t groups = 1) {
    Conv c;
    c.weight = w.count(p + ".conv.weight") ? get(p + ".conv.weight")
                                           : at::_weight_norm(w.at(p + ".conv.parametrizations.weight.original1"),
                                                              w.at(p + ".conv.parametrizations.weight.original0"), 0)
                                                 .to(device, dtype);
    c.bias = get(p + ".conv.bias");
    c.stride = stride;
    c.dilation = dilation;
    c.groups = groups;
    return c;
  };
  auto transformer = [&](const std::string& p, std::int64_t n, std::int64_t heads, std::int64_t window) {
    Transformer t;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::string l = p + ".layers." + std::to_string(i);
      t.layers.push_back({get(l + ".attention.wqkv.weight"), get(l + ".attention.wo.weight"),
                          get(l + ".feed_forward.w1.weight"), get(l + ".feed_forward.w2.weight"),
                          get(l + ".feed_forward.w3.weight"), get(l + ".ffn_norm.weight"),
                          get(l + ".attention_norm.weight"), get(l + ".attention_layer_scale.gamma"),
                          get(l + ".ffn_layer_scale.gamma")});
    }
    t.norm = get(p + ".norm.weight");
    t.heads = heads;
    t.window = window;
    return t;
  };
  FishCodec net;
  net.stem = conv("encoder.block.0");
  std::int64_t width = d.encoder_dim;
  for (int b = 0; b < 4; ++b) {
    const std::string p = "encoder.block." + std::to_string(b + 1) + ".block.";
    width *= 2;
    FishCodec::Block block;
    for (int u = 0; u < 3; ++u) {
      const std::string r = p + std::to_string(u) + ".block.";
      const std::int64_t dilation = u == 0 ? 1 : u == 1 ? 3 : 9;
      block.alphas.push_back({get(r + "0.alpha"), get(r + "2.alpha")});
      block.convs.push_back({conv(r + "1", 1, dilation), conv(r + "3")});
    }
    block.alpha = get(p + "3.alpha");
    block.down = conv(p + "4", kRates[b]);
    if (b == 3 && d.encoder_layers > 0)
      block.transformer = transformer(p + "5", d.encoder_layers, width / kHeadDim, kEncoderWindow);
    net.blocks.push_back(std::move(block));
  }
  net.post_alpha = get("encoder.block.5.alpha");
  net.post_conv = conv("encoder.block.6");
  for (int i = 0; i < 2; ++i) {
    const std::string p = "quantizer.downsample." + std::to_string(i);
    ConvNeXt c{conv(p + ".1.dwconv", 1, 1, d.latent()),
               get(p + ".1.norm.weight"),
               get(p + ".1.norm.bias"),
               get(p + ".1.pwconv1.weight"),
               get(p + ".1.pwconv1.bias"),
               get(p + ".1.pwconv2.weight"),
               get(p + ".1.pwconv2.bias"),
               get(p + ".1.gamma")};
    net.downsample.emplace_back(conv(p + ".0", 2), std::move(c));
  }
  net.pre_module = transformer("quantizer.pre_module", d.pre_layers, d.pre_heads, kPreWindow);
  auto vq = [&](const std::string& p) {  // the nearest-neighbour search always runs in float32
    auto f32 = [&](const std::string& n) { return w.at(n).to(device, at::kFloat); };
    VectorQuantize q;
    q.in_w = at::_weight_norm(f32(p + ".in_proj.weight_v"), f32(p + ".in_proj.weight_g"), 0);
    q.in_b = f32(p + ".in_proj.bias");
    q.out_w = at::_weight_norm(f32(p + ".out_proj.weight_v"), f32(p + ".out_proj.weight_g"), 0);
    q.out_b = f32(p + ".out_proj.bias");
    q.codebook = f32(p + ".codebook.weight");
    q.codebook_normalised = q.codebook / q.codebook.norm(2, {1}, true).clamp_min(1e-12).expand_as(q.codebook);
    return q;
  };
  net.quantizers.push_back(vq("quantizer.semantic_quantizer.quantizers.0"));
  for (int i = 0; i < kCodebooks; ++i) net.quantizers.push_back(vq("quantizer.quantizer.quantizers." + std::to_string(i)));
  return net;
}

nlohmann::json dims_json(const FishDims& d) {
  return {{"encoder_dim", d.encoder_dim},
          {"encoder_rates", {2, 4, 8, 8}},
          {"encoder_transformer", {{"layers", d.encoder_layers}, {"window", kEncoderWindow}, {"head_dim", kHeadDim}}},
          {"pre_module", {{"layers", d.pre_layers}, {"heads", d.pre_heads}, {"ffn", d.pre_ffn}, {"window", kPreWindow}}},
          {"codebooks", {{"semantic", kSemanticSize}, {"residual", kCodebooks}, {"size", kCodebookSize}, {"dim", kCodebookDim}}},
          {"nearest", "cosine"},
          {"rope", "interleaved, bfloat16 table"},
          {"sample_rate", 44100},
          {"frame", kFrame}};
}

class FishNetwork final : public Network {
 public:
  explicit FishNetwork(const NetworkSettings& s) : device_(nn::device_of(s.device)), dtype_(nn::scalar_type_of(s.dtype)) {
    const FishDims d = dims_for(s.scale);
    const std::vector<TensorSpec> tree = parameter_tree(d);
    WeightMap weights;
    if (s.checkpoint.empty()) {
      ProxyConfig proxy = proxy_config("fish-s2-pro", s, dims_json(d));
      config_ = proxy.config;
      weights = seeded_weights(tree, proxy.weight_seed);
    } else {
      CheckpointFile file = read_checkpoint(s.checkpoint, {"codec.pth"});
      weights = bind_checkpoint(file, tree, kIgnored, "fish-s2-pro");
      config_ = checkpoint_config("fish-s2-pro", s, dims_json(d), file);
      mapping_ = file.mapping;
    }
    for (const auto& [name, t] : weights) config_.parameters += t.numel();
    c10::InferenceMode guard;
    net_ = build(weights, d, device_, dtype_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    c10::InferenceMode guard;
    // On the CPU in float32 each clip runs alone at its own padded length, as upstream encodes it, so
    // a batched artifact is the single encode's bit for bit; elsewhere the batch is one padded tensor.
    if (device_.is_cpu() && dtype_ == at::kFloat && items.size() > 1) {
      std::vector<NetworkOutput> out;
      for (const NetworkItem& item : items) out.push_back(std::move(encode(std::span(&item, 1)).front()));
      return out;
    }
    return encode_padded_codes(items, kFrame, device_, dtype_, /*time_dim=*/1,
                               [this](const at::Tensor& wave) { return net_(wave); });
  }

  const EncoderConfig& config() const override { return config_; }

 private:
  at::Device device_;
  at::ScalarType dtype_;
  EncoderConfig config_;
  std::shared_ptr<const void> mapping_;  // tensors of net_ may view the checkpoint's mapping
  FishCodec net_;
};

}  // namespace fish
}  // namespace

std::unique_ptr<Network> make_fish_network(const NetworkSettings& settings) {
  if (!settings.module_path.empty()) return make_torchscript_network(settings, "fish-s2-pro", {"codes"});
  return std::make_unique<fish::FishNetwork>(settings);
}

}  // namespace refenc::encoders
