// Qwen3-TTS voice-clone prompt encoders in LibTorch: the 12 Hz speech tokenizer's encoder and split RVQ
// (QwenLM/Qwen3-TTS `qwen_tts/core/tokenizer_12hz/`, whose encoder is transformers' `MimiModel`) and the
// ECAPA-TDNN speaker encoder with its log-mel front end (`qwen_tts/core/models/modeling_qwen3_tts.py`).
//
// The parameter trees are the published files' (`speech_tokenizer/model.safetensors` and the `speaker_encoder.*`
// tensors of the model's `model.safetensors`), names and shapes exactly; the tokenizer's decoder, the quantizers'
// output projections, the acoustic codebooks past the 16 codes Qwen3-TTS keeps and the talker are accepted and not
// loaded. Each op is the one upstream calls, in its order and on the same shapes (one clip at its own length), so
// that on the CPU in float32 on one thread the codes are upstream's bit for bit and the embedding within float
// rounding (tests/encoders/qwen_checkpoint_test.cpp). The seeded proxies are this network with seeded weights at
// reduced widths and depths (docs/encoders.md).
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.hpp"
#include "encoders/checkpoint.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"

namespace refenc::encoders {

namespace {
namespace qwen {  // named: the networks share names (dims_for, kHop) and a unity build compiles them together

constexpr std::int64_t kRate = 24000;
constexpr std::int64_t kHop = 1920;            // encode_downsample_rate
constexpr std::int64_t kKeptCodebooks = 16;    // encoder_valid_num_quantizers: 1 semantic + 15 acoustic
constexpr std::int64_t kPublishedAcoustic = 31;  // num_quantizers 32 - 1 semantic
constexpr std::int64_t kRatios[4] = {4, 5, 6, 8};  // reversed(upsampling_ratios)
constexpr std::int64_t kCodebookSize = 2048;
constexpr std::int64_t kFft = 1024, kMelHop = 256, kMels = 128;
constexpr std::int64_t kMinSamples = 1280;  // 5 mel frames: the speaker encoder's reflect padding needs more than 4
constexpr double kNormEps = 1e-5, kRopeTheta = 10000.0, kAspEps = 1e-12;

/// The config values that a scale changes; everything else is fixed by the published configs.
struct QwenDims {
  std::int64_t filters;       ///< SEANet stem width (num_filters); doubled by each of the 4 downsampling convs.
  std::int64_t hidden;        ///< hidden_size: SEANet output and transformer width.
  std::int64_t layers, heads, head_dim, intermediate;  ///< Encoder transformer.
  std::int64_t codebook_dim;  ///< codebook_dim = vector_quantization_hidden_dimension.
  std::int64_t channels, se, attention, enc_dim;  ///< ECAPA: enc_channels[0..3], se, attention channels, enc_dim.
};

QwenDims dims_for(const std::string& scale) {
  if (scale == "full") return {64, 512, 8, 8, 64, 2048, 256, 512, 128, 128, 1024};
  if (scale == "small") return {16, 128, 2, 2, 64, 512, 64, 128, 32, 32, 512};
  return {4, 32, 1, 2, 16, 128, 8, 32, 8, 16, 128};
}

const std::string kSemantic = "encoder.quantizer.semantic_residual_vector_quantizer.";
const std::string kAcoustic = "encoder.quantizer.acoustic_residual_vector_quantizer.";

/// Parts of the speech tokenizer's file that encoding does not run.
std::vector<std::string> ignored_tokenizer_prefixes() {
  std::vector<std::string> out = {"decoder.", kSemantic + "output_proj.", kAcoustic + "output_proj."};
  for (std::int64_t i = kKeptCodebooks - 1; i < kPublishedAcoustic; ++i)
    out.push_back(kAcoustic + "layers." + std::to_string(i) + ".");
  return out;
}

// ---- the parameter trees -----------------------------------------------------------------------------

struct Tree {
  std::vector<TensorSpec> specs;
  void add(std::string name, std::vector<std::int64_t> shape) { specs.push_back({std::move(name), std::move(shape)}); }
  void conv(const std::string& p, std::int64_t cin, std::int64_t cout, std::int64_t k, bool bias = true) {
    add(p + ".weight", {cout, cin, k});
    if (bias) add(p + ".bias", {cout});
  }
};

std::vector<TensorSpec> tokenizer_tree(const QwenDims& d) {
  Tree t;
  const std::string s = "encoder.encoder.layers.";
  t.conv(s + "0.conv", 1, d.filters, 7);
  std::int64_t c = d.filters;
  for (int b = 0; b < 4; ++b) {
    const std::string r = s + std::to_string(1 + 3 * b) + ".block.";
    t.conv(r + "1.conv", c, c / 2, 3);
    t.conv(r + "3.conv", c / 2, c, 1);
    t.conv(s + std::to_string(3 + 3 * b) + ".conv", c, 2 * c, 2 * kRatios[b]);
    c *= 2;
  }
  t.conv(s + "14.conv", c, d.hidden, 3);
  const std::int64_t width = d.heads * d.head_dim;
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const std::string l = "encoder.encoder_transformer.layers." + std::to_string(i) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) t.add(l + "self_attn." + proj + ".weight", {width, d.hidden});
    t.add(l + "self_attn.o_proj.weight", {d.hidden, width});
    t.add(l + "mlp.fc1.weight", {d.intermediate, d.hidden});
    t.add(l + "mlp.fc2.weight", {d.hidden, d.intermediate});
    for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
      t.add(l + norm + ".weight", {d.hidden});
      t.add(l + norm + ".bias", {d.hidden});
    }
    t.add(l + "self_attn_layer_scale.scale", {d.hidden});
    t.add(l + "mlp_layer_scale.scale", {d.hidden});
  }
  t.conv("encoder.downsample.conv", d.hidden, d.hidden, 4, false);
  auto rvq = [&](const std::string& p, std::int64_t n) {
    if (d.codebook_dim != d.hidden) t.conv(p + "input_proj", d.hidden, d.codebook_dim, 1, false);
    for (std::int64_t q = 0; q < n; ++q) {
      const std::string cb = p + "layers." + std::to_string(q) + ".codebook.";
      t.add(cb + "initialized", {1});
      t.add(cb + "cluster_usage", {kCodebookSize});
      t.add(cb + "embed_sum", {kCodebookSize, d.codebook_dim});
    }
  };
  rvq(kSemantic, 1);
  rvq(kAcoustic, kKeptCodebooks - 1);
  return std::move(t.specs);
}

std::vector<TensorSpec> speaker_tree(const QwenDims& d) {
  Tree t;
  const std::string p = "speaker_encoder.";
  const std::int64_t c = d.channels, mfa = 3 * c;
  t.conv(p + "blocks.0.conv", kMels, c, 5);
  for (int b = 1; b <= 3; ++b) {
    const std::string s = p + "blocks." + std::to_string(b) + ".";
    t.conv(s + "tdnn1.conv", c, c, 1);
    for (int i = 0; i < 7; ++i) t.conv(s + "res2net_block.blocks." + std::to_string(i) + ".conv", c / 8, c / 8, 3);
    t.conv(s + "tdnn2.conv", c, c, 1);
    t.conv(s + "se_block.conv1", c, d.se, 1);
    t.conv(s + "se_block.conv2", d.se, c, 1);
  }
  t.conv(p + "mfa.conv", mfa, mfa, 1);
  t.conv(p + "asp.tdnn.conv", 3 * mfa, d.attention, 1);
  t.conv(p + "asp.conv", d.attention, mfa, 1);
  t.conv(p + "fc", 2 * mfa, d.enc_dim, 1);
  return std::move(t.specs);
}

using nn::ends_with;

/// Seeded proxy weights for `tree`, drawn in tree order: weights N(0, 1/fan_in), codebook sums N(0, 1), usages
/// and norms 1, biases 0, LayerScale 1e-2 (Mimi's layer_scale_initial_scale).
void seed_weights(const std::vector<TensorSpec>& tree, nn::SeededInit& init, WeightMap& w) {
  nn::seed_tree(tree, init, [](const std::string& n) {
    if (ends_with(n, "initialized") || ends_with(n, "cluster_usage") || ends_with(n, "layernorm.weight"))
      return nn::SeededKind::ones;
    if (ends_with(n, ".scale")) return nn::SeededKind::layer_scale;
    if (ends_with(n, "bias")) return nn::SeededKind::zeros;
    if (ends_with(n, "embed_sum")) return nn::SeededKind::normal;
    return nn::SeededKind::weight;
  }, w);
}

// ---- the speech tokenizer ----------------------------------------------------------------------------

/// MimiConv1d, causal: left padding kernel - stride, right padding to whole frames (computed in float32 as
/// `_get_extra_padding_for_conv1d` does), zeros or the edge frame replicated, then conv1d.
struct CausalConv {
  at::Tensor weight, bias;
  std::int64_t stride = 1;
  bool replicate = false;
  at::Tensor operator()(const at::Tensor& x) const {
    const std::int64_t k = weight.size(2), pad = k - stride, length = x.size(-1);
    const float frames = static_cast<float>(length - k + pad) / static_cast<float>(stride) + 1.0f;
    const std::int64_t extra = (static_cast<std::int64_t>(std::ceil(frames)) - 1) * stride + k - pad - length;
    const at::Tensor padded = replicate ? at::replication_pad1d(x, {pad, extra}) : at::constant_pad_nd(x, {pad, extra}, 0);
    const std::int64_t one = 1, zero = 0;
    return at::conv1d(padded, weight, bias, at::IntArrayRef(stride), at::IntArrayRef(zero), at::IntArrayRef(one), 1);
  }
};

/// MimiTransformerModel: pre-norm LayerNorm layers with LayerScale, RoPE (rotate_half) eager attention under a
/// causal mask, GELU MLP; no final norm. [B, T, C] in and out.
struct MimiTransformer {
  struct Layer {
    at::Tensor q, k, v, o, fc1, fc2, norm1_w, norm1_b, norm2_w, norm2_b, attn_scale, mlp_scale;
  };
  std::vector<Layer> layers;
  std::int64_t heads = 1, head_dim = 64;

  at::Tensor operator()(at::Tensor x) const {
    const std::int64_t b = x.size(0), t = x.size(1);
    // MimiRotaryEmbedding (rope "default"): inv_freq [1, D/2, 1] @ positions [1, 1, T], cat(freqs, freqs).
    const at::Tensor exponents = at::arange(0, head_dim, 2, at::TensorOptions(x.device()).dtype(at::kLong)).to(at::kFloat) / head_dim;
    const at::Tensor inv_freq = at::reciprocal(at::pow(kRopeTheta, exponents));
    const at::Tensor positions = at::arange(t, at::TensorOptions(x.device()).dtype(at::kLong)).unsqueeze(0);
    const at::Tensor freqs =
        at::matmul(inv_freq.index({at::indexing::None, at::indexing::Slice(), at::indexing::None}).expand({1, -1, 1}),
                   positions.index({at::indexing::Slice(), at::indexing::None, at::indexing::Slice()}).to(at::kFloat))
            .transpose(1, 2);
    const at::Tensor emb = at::cat({freqs, freqs}, -1);
    const at::Tensor cos = emb.cos().to(x.scalar_type()).unsqueeze(1), sin = emb.sin().to(x.scalar_type()).unsqueeze(1);
    // create_causal_mask: additive, 0 where key <= query, the dtype's lowest value elsewhere.
    const at::Tensor kv = at::arange(t, at::TensorOptions(x.device()).dtype(at::kLong));
    const at::Tensor allowed = kv.unsqueeze(0) <= kv.unsqueeze(1);
    const double lowest = x.scalar_type() == at::kBFloat16 ? static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest())
                                                          : static_cast<double>(std::numeric_limits<float>::lowest());
    const at::Tensor mask =
        at::where(allowed, at::scalar_tensor(0.0, x.options()), at::scalar_tensor(lowest, x.options()))
            .index({at::indexing::None, at::indexing::None})
            .expand({b, 1, t, t});
    auto rotate_half = [](const at::Tensor& y) {
      const std::int64_t half = y.size(-1) / 2;
      return at::cat({-y.slice(-1, half), y.slice(-1, 0, half)}, -1);
    };
    const double scaling = 1.0 / std::sqrt(static_cast<double>(head_dim));
    for (const Layer& l : layers) {
      at::Tensor h = at::layer_norm(x, {x.size(-1)}, l.norm1_w, l.norm1_b, kNormEps);
      at::Tensor q = at::linear(h, l.q).view({b, t, heads, head_dim}).transpose(1, 2);
      at::Tensor k = at::linear(h, l.k).view({b, t, heads, head_dim}).transpose(1, 2);
      const at::Tensor v = at::linear(h, l.v).view({b, t, heads, head_dim}).transpose(1, 2);
      q = q * cos + rotate_half(q) * sin;
      k = k * cos + rotate_half(k) * sin;
      at::Tensor w = at::matmul(q, k.transpose(2, 3)) * scaling;
      w = at::softmax(w + mask, -1, at::kFloat).to(q.scalar_type());
      at::Tensor y = at::matmul(w, v).transpose(1, 2).contiguous().view({b, t, -1});
      x = x + l.attn_scale * at::linear(y, l.o);
      h = at::layer_norm(x, {x.size(-1)}, l.norm2_w, l.norm2_b, kNormEps);
      x = x + l.mlp_scale * at::linear(at::gelu(at::linear(h, l.fc1)), l.fc2);
    }
    return x;
  }
};

/// MimiResidualVectorQuantizer.encode: input projection, then per layer the Euclidean nearest centroid
/// (torch.cdist in float32) and the residual minus that centroid.
struct Rvq {
  at::Tensor input_proj;              // undefined when codebook_dim == hidden
  std::vector<at::Tensor> centroids;  // embed_sum / clamp(cluster_usage, 1e-5), in the model dtype
  /// embeddings [B, C, T] -> codes [layers, B, T].
  at::Tensor operator()(const at::Tensor& embeddings) const {
    at::Tensor residual = input_proj.defined() ? at::conv1d(embeddings, input_proj) : embeddings;
    std::vector<at::Tensor> codes;
    for (const at::Tensor& embed : centroids) {
      const at::Tensor x = residual.permute({0, 2, 1});
      const at::Tensor flat = x.reshape({-1, x.size(-1)});
      const at::Tensor dists = at::cdist(flat.unsqueeze(0).to(at::kFloat), embed.unsqueeze(0).to(at::kFloat), 2)[0];
      const at::Tensor idx = dists.argmin(-1).view({x.size(0), x.size(1)});
      residual = residual - at::embedding(embed, idx).permute({0, 2, 1});
      codes.push_back(idx);
    }
    return at::stack(codes);
  }
};

struct SpeechTokenizer {
  CausalConv stem, head, downsample;
  struct Block {
    CausalConv conv1, conv2, down;
  };
  std::vector<Block> blocks;
  MimiTransformer transformer;
  Rvq semantic, acoustic;

  /// wave [B, 1, N] -> codes [B, 16, ceil(N / 1920)] int64.
  at::Tensor operator()(const at::Tensor& wave) const {
    at::Tensor x = stem(wave);
    for (const Block& b : blocks) {
      x = x + b.conv2(at::elu(b.conv1(at::elu(x))));
      x = b.down(at::elu(x));
    }
    x = head(at::elu(x));
    x = transformer(x.transpose(1, 2)).transpose(1, 2);
    x = downsample(x);
    return at::cat({semantic(x), acoustic(x)}, 0).transpose(0, 1);
  }
};

// ---- the speaker encoder -----------------------------------------------------------------------------

/// nn.Conv1d(padding="same", padding_mode="reflect"): reflect padding d(k-1)/2 on each side, then conv1d.
struct SameConv {
  at::Tensor weight, bias;
  std::int64_t dilation = 1;
  at::Tensor operator()(const at::Tensor& x) const {
    const std::int64_t total = dilation * (weight.size(2) - 1), left = total / 2;
    const std::int64_t one = 1, zero = 0;
    return at::conv1d(at::reflection_pad1d(x, {left, total - left}), weight, bias, at::IntArrayRef(one),
                      at::IntArrayRef(zero), at::IntArrayRef(dilation), 1);
  }
};

struct Ecapa {
  SameConv stem, mfa, asp_tdnn, asp_conv, fc;
  struct Block {
    SameConv tdnn1, tdnn2, se1, se2;
    std::vector<SameConv> res2net;
  };
  std::vector<Block> blocks;

  /// AttentiveStatisticsPooling._compute_statistics over time with weights m.
  static std::pair<at::Tensor, at::Tensor> statistics(const at::Tensor& x, const at::Tensor& m) {
    const at::Tensor mean = (m * x).sum(2);
    const at::Tensor sd = at::sqrt((m * (x - mean.unsqueeze(2)).pow(2)).sum(2).clamp(kAspEps));
    return {mean, sd};
  }

  /// mel [B, 128, F] -> embedding [B, enc_dim].
  at::Tensor operator()(const at::Tensor& mel) const {
    at::Tensor x = at::relu(stem(mel));
    std::vector<at::Tensor> outputs;
    for (const Block& b : blocks) {
      const at::Tensor residual = x;
      x = at::relu(b.tdnn1(x));
      std::vector<at::Tensor> parts = at::chunk(x, 8, 1), outs;
      at::Tensor part;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        part = i == 0 ? parts[0] : at::relu(b.res2net[i - 1](i == 1 ? parts[i] : parts[i] + part));
        outs.push_back(part);
      }
      x = at::relu(b.tdnn2(at::cat(outs, 1)));
      at::Tensor s = x.mean(2, true);
      s = at::sigmoid(b.se2(at::relu(b.se1(s))));
      x = x * s + residual;
      outputs.push_back(x);
    }
    x = at::relu(mfa(at::cat(outputs, 1)));
    // Attentive statistics pooling over every frame (one clip: the mask is all ones).
    const std::int64_t t = x.size(-1);
    const at::Tensor mask = at::ones({x.size(0), 1, t}, x.options());
    const at::Tensor total = mask.sum(2, true);
    auto [mean, sd] = statistics(x, mask / total);
    const at::Tensor context =
        at::cat({x, mean.unsqueeze(2).repeat({1, 1, t}), sd.unsqueeze(2).repeat({1, 1, t})}, 1);
    at::Tensor attention = asp_conv(at::tanh(at::relu(asp_tdnn(context))));
    attention = at::softmax(attention.masked_fill(mask == 0, -INFINITY), 2);
    auto [weighted_mean, weighted_sd] = statistics(x, attention);
    return fc(at::cat({weighted_mean, weighted_sd}, 1).unsqueeze(2)).squeeze(-1);
  }
};

/// librosa.filters.mel(sr, n_fft, n_mels, fmin 0, fmax) as librosa computes it: Slaney scale and area
/// normalisation in double, each triangle rounded to float32 before the normalisation is applied (librosa
/// fills a float32 array and scales it in place).
at::Tensor mel_filterbank(std::int64_t sr, std::int64_t n_fft, std::int64_t n_mels, double fmax) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp, logstep = std::log(6.4) / 27.0;
  auto hz_to_mel = [&](double f) { return f >= min_log_hz ? min_log_mel + std::log(f / min_log_hz) / logstep : f / f_sp; };
  auto mel_to_hz = [&](double m) { return m >= min_log_mel ? min_log_hz * std::exp(logstep * (m - min_log_mel)) : f_sp * m; };
  const std::int64_t bins = n_fft / 2 + 1, points = n_mels + 2;
  const double lo = hz_to_mel(0.0), hi = hz_to_mel(fmax);
  std::vector<double> mel_f(points), fft_freqs(bins);
  const double step = (hi - lo) / static_cast<double>(points - 1);  // np.linspace, the last point exactly hi
  for (std::int64_t i = 0; i < points; ++i) mel_f[i] = mel_to_hz(i == points - 1 ? hi : static_cast<double>(i) * step + lo);
  const double val = 1.0 / (static_cast<double>(n_fft) * (1.0 / static_cast<double>(sr)));  // np.fft.rfftfreq
  for (std::int64_t k = 0; k < bins; ++k) fft_freqs[k] = static_cast<double>(k) * val;
  at::Tensor fb = at::zeros({n_mels, bins}, at::kFloat);
  float* p = fb.data_ptr<float>();
  for (std::int64_t m = 0; m < n_mels; ++m) {
    const double lower_diff = mel_f[m + 1] - mel_f[m], upper_diff = mel_f[m + 2] - mel_f[m + 1];
    const double enorm = 2.0 / (mel_f[m + 2] - mel_f[m]);
    for (std::int64_t k = 0; k < bins; ++k) {
      const double lower = -(mel_f[m] - fft_freqs[k]) / lower_diff, upper = (mel_f[m + 2] - fft_freqs[k]) / upper_diff;
      const float tri = static_cast<float>(std::max(0.0, std::min(lower, upper)));
      p[m * bins + k] = static_cast<float>(static_cast<double>(tri) * enorm);
    }
  }
  return fb;
}

// ---- building from weights ---------------------------------------------------------------------------

SpeechTokenizer build_tokenizer(const WeightMap& w, const QwenDims& d, const at::Device& device, at::ScalarType dtype) {
  auto get = [&](const std::string& n) { return w.at(n).to(device, dtype); };
  auto conv = [&](const std::string& p, std::int64_t stride = 1) {
    return CausalConv{get(p + ".weight"), w.count(p + ".bias") ? get(p + ".bias") : at::Tensor(), stride, false};
  };
  SpeechTokenizer net;
  const std::string s = "encoder.encoder.layers.";
  net.stem = conv(s + "0.conv");
  for (int b = 0; b < 4; ++b) {
    const std::string r = s + std::to_string(1 + 3 * b) + ".block.";
    net.blocks.push_back({conv(r + "1.conv"), conv(r + "3.conv"), conv(s + std::to_string(3 + 3 * b) + ".conv", kRatios[b])});
  }
  net.head = conv(s + "14.conv");
  net.transformer.heads = d.heads;
  net.transformer.head_dim = d.head_dim;
  for (std::int64_t i = 0; i < d.layers; ++i) {
    const std::string l = "encoder.encoder_transformer.layers." + std::to_string(i) + ".";
    net.transformer.layers.push_back(
        {get(l + "self_attn.q_proj.weight"), get(l + "self_attn.k_proj.weight"), get(l + "self_attn.v_proj.weight"),
         get(l + "self_attn.o_proj.weight"), get(l + "mlp.fc1.weight"), get(l + "mlp.fc2.weight"),
         get(l + "input_layernorm.weight"), get(l + "input_layernorm.bias"), get(l + "post_attention_layernorm.weight"),
         get(l + "post_attention_layernorm.bias"), get(l + "self_attn_layer_scale.scale"), get(l + "mlp_layer_scale.scale")});
  }
  net.downsample = conv("encoder.downsample.conv", 2);
  net.downsample.replicate = true;
  auto rvq = [&](const std::string& p, std::int64_t n) {
    Rvq q;
    if (w.count(p + "input_proj.weight")) q.input_proj = get(p + "input_proj.weight");
    for (std::int64_t i = 0; i < n; ++i) {
      const std::string cb = p + "layers." + std::to_string(i) + ".codebook.";
      q.centroids.push_back(get(cb + "embed_sum") / get(cb + "cluster_usage").clamp_min(1e-5).unsqueeze(1));
    }
    return q;
  };
  net.semantic = rvq(kSemantic, 1);
  net.acoustic = rvq(kAcoustic, kKeptCodebooks - 1);
  return net;
}

Ecapa build_speaker(const WeightMap& w, const at::Device& device, at::ScalarType dtype) {
  const std::string p = "speaker_encoder.";
  auto conv = [&](const std::string& n, std::int64_t dilation = 1) {
    return SameConv{w.at(p + n + ".weight").to(device, dtype), w.at(p + n + ".bias").to(device, dtype), dilation};
  };
  Ecapa net;
  net.stem = conv("blocks.0.conv");
  for (int b = 1; b <= 3; ++b) {
    const std::string s = "blocks." + std::to_string(b) + ".";
    Ecapa::Block block{conv(s + "tdnn1.conv"), conv(s + "tdnn2.conv"), conv(s + "se_block.conv1"),
                       conv(s + "se_block.conv2"), {}};
    for (int i = 0; i < 7; ++i) block.res2net.push_back(conv(s + "res2net_block.blocks." + std::to_string(i) + ".conv", b + 1));
    net.blocks.push_back(std::move(block));
  }
  net.mfa = conv("mfa.conv");
  net.asp_tdnn = conv("asp.tdnn.conv");
  net.asp_conv = conv("asp.conv");
  net.fc = conv("fc");
  return net;
}

nlohmann::json dims_json(const QwenDims& d) {
  return {{"tokenizer",
           {{"num_filters", d.filters},
            {"hidden_size", d.hidden},
            {"upsampling_ratios", {8, 6, 5, 4}},
            {"transformer", {{"layers", d.layers}, {"heads", d.heads}, {"head_dim", d.head_dim}, {"intermediate", d.intermediate}}},
            {"attention", "causal (eager/sdpa)"},
            {"codebook_size", kCodebookSize},
            {"codebook_dim", d.codebook_dim},
            {"kept_codebooks", kKeptCodebooks},
            {"nearest", "euclidean, cdist"}}},
          {"speaker",
           {{"enc_channels", {d.channels, d.channels, d.channels, d.channels, 3 * d.channels}},
            {"enc_se_channels", d.se},
            {"enc_attention_channels", d.attention},
            {"enc_dim", d.enc_dim},
            {"enc_res2net_scale", 8},
            {"enc_dilations", {1, 2, 3, 4, 1}}}},
          {"mel", {{"n_fft", kFft}, {"hop", kMelHop}, {"n_mels", kMels}, {"fmax", 12000}, {"pad", (kFft - kMelHop) / 2}}},
          {"sample_rate", kRate},
          {"hop", kHop}};
}

/// The published model folder: `speech_tokenizer/model.safetensors` and `model.safetensors` (talker and
/// speaker encoder; only `speaker_encoder.*` is read).
struct QwenCheckpoint {
  CheckpointFile tokenizer, model;
};

QwenCheckpoint read_qwen_checkpoint(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::exists(path, ec)) throw Error(ErrorKind::bad_input, path + ": no such checkpoint file or folder");
    throw Error(ErrorKind::bad_input, path + ": qwen3-tts reads a model folder (a Qwen3-TTS-12Hz-*-Base download: "
                                             "model.safetensors and speech_tokenizer/model.safetensors), not a file");
  }
  QwenCheckpoint c;
  c.tokenizer = read_checkpoint((fs::path(path) / "speech_tokenizer").string(), {"model.safetensors"});
  c.model = read_checkpoint(path, {"model.safetensors"});
  return c;
}

/// The `speaker_encoder.*` tensors of the main checkpoint, bound to `tree`.
WeightMap bind_speaker(const CheckpointFile& model, const std::vector<TensorSpec>& tree) {
  CheckpointFile speaker = model;
  std::erase_if(speaker.tensors, [](const auto& kv) { return kv.first.rfind("speaker_encoder.", 0) != 0; });
  if (speaker.tensors.empty())
    throw Error(ErrorKind::bad_input, model.path + ": holds no speaker_encoder.* tensors (voice cloning needs a "
                                                   "Qwen3-TTS-12Hz-*-Base model)");
  return bind_checkpoint(speaker, tree, {}, "qwen3-tts");
}

class QwenNetwork final : public Network {
 public:
  explicit QwenNetwork(const NetworkSettings& s) : device_(nn::device_of(s.device)), dtype_(nn::scalar_type_of(s.dtype)) {
    QwenDims d = dims_for(s.scale);
    WeightMap tokenizer, speaker;
    if (s.checkpoint.empty()) {
      ProxyConfig proxy = proxy_config("qwen3-tts", s, dims_json(d));
      config_ = proxy.config;
      nn::SeededInit init(proxy.weight_seed);
      seed_weights(tokenizer_tree(d), init, tokenizer);
      seed_weights(speaker_tree(d), init, speaker);
    } else {
      QwenCheckpoint c = read_qwen_checkpoint(s.checkpoint);
      // 0.6B-Base has enc_dim 1024, 1.7B-Base 2048: the published speaker encoders differ only there.
      if (s.scale == "full")
        if (auto it = c.model.tensors.find("speaker_encoder.fc.weight"); it != c.model.tensors.end() && it->second.dim() == 3)
          if (it->second.size(0) == 2048) d.enc_dim = 2048;
      tokenizer = bind_checkpoint(c.tokenizer, tokenizer_tree(d), ignored_tokenizer_prefixes(), "qwen3-tts");
      speaker = bind_speaker(c.model, speaker_tree(d));
      const CheckpointFile* files[] = {&c.tokenizer, &c.model};
      config_ = checkpoint_config("qwen3-tts", s, dims_json(d), files, s.checkpoint);
      mappings_ = {c.tokenizer.mapping, c.model.mapping};
    }
    for (const WeightMap* m : {&tokenizer, &speaker})
      for (const auto& [name, t] : *m) config_.parameters += t.numel();
    c10::InferenceMode guard;
    tokenizer_ = build_tokenizer(tokenizer, d, device_, dtype_);
    speaker_ = build_speaker(speaker, device_, dtype_);
    mel_basis_ = mel_filterbank(kRate, kFft, kMels, 12000.0).to(device_);
    window_ = at::hann_window(kFft, at::TensorOptions().dtype(at::kFloat)).to(device_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    c10::InferenceMode guard;
    std::vector<NetworkOutput> out;
    for (const NetworkItem& item : items) {
      const auto n = static_cast<std::int64_t>(item.samples.size());
      if (n < kMinSamples)
        throw Error(ErrorKind::bad_input, "clip of " + std::to_string(n) + " samples at 24 kHz is too short for qwen3-tts's "
                                          "speaker encoder (at least " + std::to_string(kMinSamples) + ", 53 ms)");
      const at::Tensor wave =
          at::from_blob(const_cast<float*>(item.samples.data()), {1, n}, at::kFloat).to(device_, at::kFloat, false, true);
      NetworkOutput o;
      o["ref_spk_embedding"] = to_host(speaker_embedding(wave)[0]);
      if (!item.x_vector_only) {
        // Qwen3TTSTokenizerV2Model.encode: the clip alone at its length; keep ceil(N / 1920) frames, [T, 16].
        const at::Tensor codes = tokenizer_(wave.unsqueeze(1).to(dtype_))[0];
        o["ref_code"] = to_host(codes.slice(-1, 0, (n + kHop - 1) / kHop).transpose(0, 1));
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  const EncoderConfig& config() const override { return config_; }

 private:
  /// extract_speaker_embedding: mel_spectrogram (reflect pad 384, STFT 1024/256 Hann, no centring, magnitude,
  /// Slaney mel, log clamp 1e-5) in float32, then the speaker encoder in the model dtype. wave [1, N].
  at::Tensor speaker_embedding(const at::Tensor& wave) const {
    const std::int64_t pad = (kFft - kMelHop) / 2;
    const at::Tensor y = at::reflection_pad1d(wave.unsqueeze(1), {pad, pad}).squeeze(1);
    const at::Tensor spec = at::stft(y, kFft, kMelHop, kFft, window_, /*normalized=*/false, /*onesided=*/true, /*return_complex=*/true);
    const at::Tensor magnitude = at::sqrt(at::view_as_real(spec).pow(2).sum(-1) + 1e-9);
    const at::Tensor mel = at::log(at::clamp(at::matmul(mel_basis_, magnitude), 1e-5));
    return speaker_(mel.to(dtype_)).to(at::kFloat);
  }

  at::Device device_;
  at::ScalarType dtype_;
  EncoderConfig config_;
  std::vector<std::shared_ptr<const void>> mappings_;  // tensors of the networks may view the checkpoint mappings
  SpeechTokenizer tokenizer_;
  Ecapa speaker_;
  at::Tensor mel_basis_, window_;
};

}  // namespace qwen
}  // namespace

std::unique_ptr<Network> make_qwen_network(const NetworkSettings& settings) {
  if (!settings.module_path.empty())
    return make_torchscript_network(settings, "qwen3-tts", {"ref_code", "ref_spk_embedding"});
  return std::make_unique<qwen::QwenNetwork>(settings);
}

}  // namespace refenc::encoders
