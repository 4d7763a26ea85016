// MOSS-TTS Local's reference encoder in LibTorch: MOSS-Audio-Tokenizer's encoder and residual LFQ
// (OpenMOSS/MOSS-Audio-Tokenizer `modeling_moss_audio_tokenizer.py`, `MossAudioTokenizerModel._encode_frame`).
//
// The parameter tree is the published `model.safetensors`'s, names and shapes exactly; the decoder and the
// quantizer's output projection are accepted and not loaded. Each op is the one upstream calls, in its order
// and on the same shapes (patching, projected causal transformers with interleaved RoPE and a 10 s attention
// window, the weight-normalised LFQ projections, cosine nearest codes on L2-normalised vectors), so that on the
// CPU in float32 on one thread the codes are upstream's bit for bit (tests/encoders/moss_checkpoint_test.cpp).
// Attention is `scaled_dot_product_attention`'s math path, which LibTorch 1.13 lacks as an op. The seeded
// proxies are this network with seeded weights at reduced widths and depths (docs/encoders.md).
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "encoders/checkpoint.hpp"
#include "encoders/network.hpp"
#include "encoders/network_common.hpp"

namespace refenc::encoders {

namespace {
namespace moss {  // named: the networks share names (dims_for, kHop) and a unity build compiles them together

constexpr std::int64_t kRate = 24000;
constexpr std::int64_t kHop = 1920;  // downsample_rate: 240 * 2 * 2 * 2
constexpr std::int64_t kQuantizers = 32, kCodebookSize = 1024, kCodebookDim = 8;
constexpr double kMaxPeriod = 10000.0, kNormEps = 1e-5, kNormalizeEps = 1e-12;

/// One encoder stage: a PatchedPretransform of `patch` frames, then a ProjectedTransformer.
struct Stage {
  std::int64_t patch, output, d_model, heads, ffn, layers;
};

/// The config values that a scale changes; the published config is `full`.
struct MossDims {
  std::vector<Stage> stages;  ///< At 100, 50, 25 and 12.5 Hz.
  std::int64_t rvq_dim;       ///< quantizer_kwargs.rvq_dim (input_dim is the last stage's output).
  double context_s;           ///< causal_transformer_context_duration.
};

MossDims dims_for(const std::string& scale) {
  if (scale == "full")
    return {{{240, 384, 768, 12, 3072, 12}, {2, 384, 768, 12, 3072, 12}, {2, 640, 768, 12, 3072, 12},
             {2, 768, 1280, 20, 5120, 32}},
            512, 10.0};
  if (scale == "small")
    return {{{240, 96, 192, 3, 768, 2}, {2, 96, 192, 3, 768, 2}, {2, 160, 192, 3, 768, 2}, {2, 192, 320, 5, 1280, 4}},
            128, 10.0};
  // tiny: a 0.2 s attention window, so that short test clips reach it at every stage.
  return {{{240, 16, 32, 2, 128, 1}, {2, 16, 32, 2, 128, 1}, {2, 32, 32, 2, 128, 1}, {2, 64, 64, 4, 256, 2}}, 32, 0.2};
}

/// The input width of stage `i`: its patch times the previous stage's output (one audio channel first).
std::int64_t stage_input(const MossDims& d, std::size_t i) {
  return d.stages[i].patch * (i == 0 ? 1 : d.stages[i - 1].output);
}

/// Parts of the published file that encoding does not run.
const std::vector<std::string> kIgnored = {"decoder.", "quantizer.output_proj."};

// ---- the parameter tree ------------------------------------------------------------------------------

std::string stage_prefix(std::size_t i) { return "encoder." + std::to_string(2 * i + 1) + "."; }

std::vector<TensorSpec> parameter_tree(const MossDims& d) {
  std::vector<TensorSpec> t;
  auto add = [&](std::string name, std::vector<std::int64_t> shape) { t.push_back({std::move(name), std::move(shape)}); };
  for (std::size_t i = 0; i < d.stages.size(); ++i) {
    const Stage& s = d.stages[i];
    const std::string p = stage_prefix(i);
    if (stage_input(d, i) != s.d_model) add(p + "input_proj.weight", {s.d_model, stage_input(d, i)});
    for (std::int64_t l = 0; l < s.layers; ++l) {
      const std::string q = p + "transformer.layers." + std::to_string(l) + ".";
      add(q + "self_attn.in_projs.0.weight", {3 * s.d_model, s.d_model});
      add(q + "self_attn.out_projs.0.weight", {s.d_model, s.d_model});
      for (const char* norm : {"norm1", "norm2"}) {
        add(q + norm + ".weight", {s.d_model});
        add(q + norm + ".bias", {s.d_model});
      }
      add(q + "linear1.weight", {s.ffn, s.d_model});
      add(q + "linear2.weight", {s.d_model, s.ffn});
      add(q + "layer_scale_1.scale", {s.d_model});
      add(q + "layer_scale_2.scale", {s.d_model});
    }
    if (s.output != s.d_model) add(p + "output_proj.weight", {s.output, s.d_model});
  }
  auto wn_conv = [&](const std::string& p, std::int64_t cin, std::int64_t cout) {  // WNConv1d, kernel 1
    add(p + ".parametrizations.weight.original0", {cout, 1, 1});
    add(p + ".parametrizations.weight.original1", {cout, cin, 1});
    add(p + ".bias", {cout});
  };
  const std::int64_t input_dim = d.stages.back().output;
  if (input_dim != d.rvq_dim) wn_conv("quantizer.input_proj", input_dim, d.rvq_dim);
  for (std::int64_t q = 0; q < kQuantizers; ++q) {
    const std::string p = "quantizer.quantizers." + std::to_string(q);
    wn_conv(p + ".in_proj", d.rvq_dim, kCodebookDim);
    wn_conv(p + ".out_proj", kCodebookDim, d.rvq_dim);
    add(p + ".codebook.weight", {kCodebookSize, kCodebookDim});
  }
  return t;
}

using nn::ends_with;

/// The names older saves use, as upstream's loading maps them: the fused `self_attn.in_proj_weight` /
/// `out_proj.weight` (its load hook) and `weight_g` / `weight_v` (torch's weight-norm compatibility hook).
void rename_legacy(WeightMap& tensors) {
  WeightMap out;
  for (auto& [name, t] : tensors) {
    std::string n = name;
    const auto replace_tail = [&](std::string_view from, std::string_view to) {
      if (ends_with(n, from)) n = n.substr(0, n.size() - from.size()) + std::string(to);
    };
    replace_tail("self_attn.in_proj_weight", "self_attn.in_projs.0.weight");
    replace_tail("self_attn.in_proj.weight", "self_attn.in_projs.0.weight");
    replace_tail("self_attn.out_proj.weight", "self_attn.out_projs.0.weight");
    if (n.rfind("quantizer.", 0) == 0) {
      replace_tail(".weight_g", ".parametrizations.weight.original0");
      replace_tail(".weight_v", ".parametrizations.weight.original1");
    }
    out.emplace(std::move(n), std::move(t));
  }
  tensors = std::move(out);
}

/// Seeded proxy weights for `tree`: codebooks N(0, 1), norms 1, biases 0, LayerScale 1e-2 (upstream's
/// layer_scale init), the other weights N(0, 1/fan_in), weight-norm gains |v| (`nn::seed_tree`).
WeightMap seeded_weights(const std::vector<TensorSpec>& tree, const std::string& seed) {
  nn::SeededInit init(seed);
  WeightMap w;
  nn::seed_tree(tree, init, [](const std::string& n) {
    if (ends_with(n, "norm1.weight") || ends_with(n, "norm2.weight")) return nn::SeededKind::ones;
    if (ends_with(n, ".scale")) return nn::SeededKind::layer_scale;
    if (ends_with(n, "bias")) return nn::SeededKind::zeros;
    if (ends_with(n, "codebook.weight")) return nn::SeededKind::normal;
    return nn::SeededKind::weight;
  }, w);
  return w;
}

// ---- the network -------------------------------------------------------------------------------------

/// MossAudioTokenizerTransformer: pre-norm LayerNorm layers with LayerScale, interleaved RoPE, a causal mask
/// limited to `context` frames, GELU MLP; no final norm. [B, T, C] in and out.
struct Transformer {
  struct Layer {
    at::Tensor in_proj, out_proj, norm1_w, norm1_b, norm2_w, norm2_b, linear1, linear2, scale1, scale2;
  };
  std::vector<Layer> layers;
  std::int64_t heads = 1, context = 1;

  at::Tensor operator()(at::Tensor x) const {
    const std::int64_t b = x.size(0), t = x.size(1), c = x.size(2), head_dim = c / heads;
    const auto f32 = at::TensorOptions(x.device()).dtype(at::kFloat);
    // apply_rope at offset 0: angle = exp(d * -log(max_period) * 2 / D) * t, pairs (2i, 2i + 1) rotated.
    const at::Tensor freqs = at::exp(at::arange(head_dim / 2, f32) * (-std::log(kMaxPeriod) * 2 / static_cast<double>(head_dim)));
    const at::Tensor ts = (at::zeros({1}, f32).view({-1, 1}) + at::arange(t, f32)).view({1, 1, -1, 1});
    const at::Tensor rotr = at::cos(freqs * ts), roti = at::sin(freqs * ts);
    auto rope = [&](const at::Tensor& y) {
      const at::Tensor pairs = y.view({b, heads, t, head_dim / 2, 2});
      const at::Tensor yr = pairs.select(-1, 0).to(at::kFloat), yi = pairs.select(-1, 1).to(at::kFloat);
      return at::stack({(yr * rotr - yi * roti).to(y.scalar_type()), (yr * roti + yi * rotr).to(y.scalar_type())}, -1)
          .view({b, heads, t, head_dim});
    };
    // The causal window (key <= query, query - key < context) as scaled_dot_product_attention's math path
    // turns a boolean mask into an additive one.
    const at::Tensor pos = at::arange(t, at::TensorOptions(x.device()).dtype(at::kLong));
    const at::Tensor delta = pos.view({-1, 1}) - pos.view({1, -1});
    const at::Tensor allowed = (delta >= 0).logical_and(delta < context);
    const at::Tensor mask = at::where(allowed.logical_not(), -std::numeric_limits<double>::infinity(),
                                      at::scalar_tensor(0.0, x.options()));
    const double scaling = std::sqrt(1.0 / std::sqrt(static_cast<double>(head_dim)));
    for (const Layer& l : layers) {
      at::Tensor h = at::layer_norm(x, {c}, l.norm1_w, l.norm1_b, kNormEps);
      const at::Tensor qkv = at::linear(h, l.in_proj).reshape({b, t, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
      const at::Tensor q = rope(qkv[0]), k = rope(qkv[1]), v = qkv[2];
      at::Tensor attn = at::matmul(q * scaling, k.transpose(-2, -1) * scaling);
      attn.add_(mask);
      attn = at::softmax(attn, -1);
      const at::Tensor y = at::matmul(attn, v).transpose(1, 2).reshape({b, t, c});
      x = x + l.scale1 * at::linear(y, l.out_proj);
      h = at::layer_norm(x, {c}, l.norm2_w, l.norm2_b, kNormEps);
      x = x + l.scale2 * at::linear(at::gelu(at::linear(h, l.linear1)), l.linear2);
    }
    return x;
  }
};

/// MossAudioTokenizerLFQ inside MossAudioTokenizerResidualLFQ: weight-normalised 1x1 projections to the
/// 8-dim codebook space and back, the nearest L2-normalised code by squared distance.
struct Lfq {
  at::Tensor in_w, in_b, out_w, out_b, codebook, codebook_unit;
};

struct MossEncoder {
  struct StageNet {
    std::int64_t patch = 1;
    at::Tensor input_proj, output_proj;  // undefined where upstream has nn.Identity
    Transformer transformer;
  };
  std::vector<StageNet> stages;
  at::Tensor input_w, input_b;  // quantizer.input_proj, undefined when input_dim == rvq_dim
  std::vector<Lfq> quantizers;

  /// wave [B, 1, N] (N a multiple of 1920), valid samples per row -> codes [32, B, N / 1920].
  at::Tensor operator()(const at::Tensor& wave, const at::Tensor& lengths, at::ScalarType dtype) const {
    at::Tensor x = wave.to(dtype);
    at::Tensor valid = lengths;
    for (const StageNet& s : stages) {
      // PatchedPretransform.encode: [B, D, T] -> [B, D * h, T / h], channel d * h + j holding frame j of each patch.
      const std::int64_t b = x.size(0), d = x.size(1);
      x = x.reshape({b, d, -1, s.patch}).permute({0, 1, 3, 2}).reshape({b, d * s.patch, -1});
      valid = at::floor_divide(valid, s.patch);
      at::Tensor h = x.transpose(1, 2);
      if (s.input_proj.defined()) h = at::linear(h, s.input_proj);
      h = s.transformer(h);
      if (s.output_proj.defined()) h = at::linear(h, s.output_proj);
      x = h.transpose(1, 2);
    }
    return quantize(x, valid);
  }

  /// MossAudioTokenizerResidualLFQ.forward: codes [32, B, T]; frames past each row's valid length see a zero
  /// residual, as upstream masks them.
  at::Tensor quantize(const at::Tensor& e, const at::Tensor& valid) const {
    const at::Tensor z = (input_w.defined() ? at::conv1d(e.to(at::kFloat), input_w, input_b) : e).to(at::kFloat);
    const std::int64_t b = z.size(0), t = z.size(2);
    const at::Tensor mask =
        (at::arange(t, at::TensorOptions(z.device()).dtype(at::kLong)).expand({b, t}) < valid.unsqueeze(1)).unsqueeze(1);
    at::Tensor residual = z.clone().to(at::kFloat);
    std::vector<at::Tensor> codes;
    for (const Lfq& q : quantizers) {
      const at::Tensor z_e = at::conv1d(residual * mask, q.in_w, q.in_b).to(at::kFloat);
      at::Tensor enc = z_e.transpose(1, 2).reshape({-1, z_e.size(1)}).to(at::kFloat);
      enc = enc / at::norm(enc, 2, at::IntArrayRef{1}, true).clamp_min(kNormalizeEps).expand_as(enc);
      const at::Tensor dist = enc.pow(2).sum(1, true) - at::matmul(2 * enc, q.codebook_unit.t()) +
                              q.codebook_unit.pow(2).sum(1, true).t();
      const at::Tensor idx = std::get<1>(at::max(-dist, 1)).reshape({b, -1});
      const at::Tensor chosen = at::embedding(q.codebook, idx).transpose(1, 2).to(at::kFloat);
      const at::Tensor z_q = at::conv1d((z_e + (chosen - z_e)).to(at::kFloat), q.out_w, q.out_b).to(at::kFloat);
      residual = residual - z_q * mask;
      codes.push_back(idx);
    }
    return at::stack(codes);
  }
};

MossEncoder build(const WeightMap& w, const MossDims& d, const at::Device& device, at::ScalarType dtype) {
  auto get = [&](const std::string& name, at::ScalarType type) { return w.at(name).to(device, type).contiguous(); };
  auto optional = [&](const std::string& name, at::ScalarType type) {
    auto it = w.find(name);
    return it == w.end() ? at::Tensor() : it->second.to(device, type).contiguous();
  };
  MossEncoder net;
  for (std::size_t i = 0; i < d.stages.size(); ++i) {
    const Stage& s = d.stages[i];
    const std::string p = stage_prefix(i);
    MossEncoder::StageNet st;
    st.patch = s.patch;
    st.input_proj = optional(p + "input_proj.weight", dtype);
    st.output_proj = optional(p + "output_proj.weight", dtype);
    st.transformer.heads = s.heads;
    // context = int(frame rate * causal_transformer_context_duration), the frame rate after this stage's patch.
    double rate = static_cast<double>(kRate);
    for (std::size_t j = 0; j <= i; ++j) rate /= static_cast<double>(d.stages[j].patch);
    st.transformer.context = static_cast<std::int64_t>(rate * d.context_s);
    for (std::int64_t l = 0; l < s.layers; ++l) {
      const std::string q = p + "transformer.layers." + std::to_string(l) + ".";
      st.transformer.layers.push_back({get(q + "self_attn.in_projs.0.weight", dtype), get(q + "self_attn.out_projs.0.weight", dtype),
                                       get(q + "norm1.weight", dtype), get(q + "norm1.bias", dtype),
                                       get(q + "norm2.weight", dtype), get(q + "norm2.bias", dtype),
                                       get(q + "linear1.weight", dtype), get(q + "linear2.weight", dtype),
                                       get(q + "layer_scale_1.scale", dtype), get(q + "layer_scale_2.scale", dtype)});
    }
    net.stages.push_back(std::move(st));
  }
  // The quantizer runs in float32 whatever the dtype (upstream casts to float); weight norm folded once,
  // as at::_weight_norm(v, g, 0) computes it on every upstream call.
  auto wn = [&](const std::string& p) {
    return at::_weight_norm(get(p + ".parametrizations.weight.original1", at::kFloat),
                            get(p + ".parametrizations.weight.original0", at::kFloat), 0);
  };
  if (w.count("quantizer.input_proj.bias")) {
    net.input_w = wn("quantizer.input_proj");
    net.input_b = get("quantizer.input_proj.bias", at::kFloat);
  }
  for (std::int64_t q = 0; q < kQuantizers; ++q) {
    const std::string p = "quantizer.quantizers." + std::to_string(q);
    Lfq l{wn(p + ".in_proj"), get(p + ".in_proj.bias", at::kFloat), wn(p + ".out_proj"),
          get(p + ".out_proj.bias", at::kFloat), get(p + ".codebook.weight", at::kFloat), {}};
    l.codebook_unit =
        l.codebook / at::norm(l.codebook, 2, at::IntArrayRef{1}, true).clamp_min(kNormalizeEps).expand_as(l.codebook);
    net.quantizers.push_back(std::move(l));
  }
  return net;
}

nlohmann::json dims_json(const MossDims& d) {
  nlohmann::json stages = nlohmann::json::array();
  for (const Stage& s : d.stages)
    stages.push_back({{"patch", s.patch}, {"output", s.output}, {"d_model", s.d_model}, {"heads", s.heads},
                      {"ffn", s.ffn}, {"layers", s.layers}});
  return {{"encoder", stages},
          {"transformer", "pre-LN LayerNorm, LayerScale, interleaved RoPE 10000, GELU, fused QKV without bias"},
          {"context_s", d.context_s},
          {"quantizer",
           {{"type", "rlfq"}, {"rvq_dim", d.rvq_dim}, {"quantizers", kQuantizers}, {"codebook_size", kCodebookSize},
            {"codebook_dim", kCodebookDim}, {"nearest", "L2-normalised, squared distance"}}},
          {"sample_rate", kRate},
          {"hop", kHop},
          {"frames", "floor(samples / 1920)"},
          {"loudness_dbfs", -20.0},
          {"max_gain_db", 3.0}};
}

class MossNetwork final : public Network {
 public:
  explicit MossNetwork(const NetworkSettings& s) : device_(nn::device_of(s.device)), dtype_(nn::scalar_type_of(s.dtype)) {
    const MossDims d = dims_for(s.scale);
    const std::vector<TensorSpec> tree = parameter_tree(d);
    WeightMap weights;
    if (s.checkpoint.empty()) {
      ProxyConfig proxy = proxy_config("moss-tts-local", s, dims_json(d));
      config_ = proxy.config;
      weights = seeded_weights(tree, proxy.weight_seed);
    } else {
      CheckpointFile file = read_checkpoint(s.checkpoint, {"model.safetensors"});
      rename_legacy(file.tensors);
      weights = bind_checkpoint(file, tree, kIgnored, "moss-tts-local");
      config_ = checkpoint_config("moss-tts-local", s, dims_json(d), file);
      mapping_ = file.mapping;
    }
    for (const auto& [name, t] : weights) config_.parameters += t.numel();
    c10::InferenceMode guard;
    net_ = build(weights, d, device_, dtype_);
  }

  std::vector<NetworkOutput> encode(std::span<const NetworkItem> items) override {
    c10::InferenceMode guard;
    for (const NetworkItem& item : items)
      if (item.samples.size() < static_cast<std::size_t>(kHop))
        throw Error(ErrorKind::bad_input, "clip of " + std::to_string(item.samples.size()) + " samples at 24 kHz is too "
                                          "short for moss-tts-local (at least 1920, one 80 ms frame)");
    // On the CPU in float32 each clip runs alone, as upstream's `encode` runs it, so a batched artifact is the
    // single encode's bit for bit; elsewhere the batch is one zero-padded tensor, as upstream's `batch_encode`.
    if (device_.is_cpu() && dtype_ == at::kFloat && items.size() > 1) {
      std::vector<NetworkOutput> out;
      for (const NetworkItem& item : items) out.push_back(std::move(encode(std::span(&item, 1)).front()));
      return out;
    }
    std::vector<std::span<const float>> clips;
    std::vector<std::int64_t> lengths;
    for (const NetworkItem& item : items) {
      clips.push_back(item.samples);
      lengths.push_back(static_cast<std::int64_t>(item.samples.size()));
    }
    const at::Tensor wave = nn::pad_batch(clips, kHop, device_);
    const at::Tensor valid = at::tensor(lengths, at::kLong).to(device_);
    const at::Tensor codes = net_(wave, valid, dtype_);  // [32, B, T]
    std::vector<NetworkOutput> out;
    for (std::size_t i = 0; i < items.size(); ++i) {
      NetworkOutput o;
      // audio_codes_lengths: floor(samples / 1920) frames; [T, 32] as MOSS-TTS stores reference codes.
      o["codes"] = to_host(codes.select(1, static_cast<std::int64_t>(i)).slice(1, 0, lengths[i] / kHop).transpose(0, 1));
      out.push_back(std::move(o));
    }
    return out;
  }

  const EncoderConfig& config() const override { return config_; }

 private:
  at::Device device_;
  at::ScalarType dtype_;
  EncoderConfig config_;
  std::shared_ptr<const void> mapping_;  // tensors of net_ may view the checkpoint's mapping
  MossEncoder net_;
};

}  // namespace moss
}  // namespace

std::unique_ptr<Network> make_moss_network(const NetworkSettings& settings) {
  if (!settings.module_path.empty()) return make_torchscript_network(settings, "moss-tts-local", {"codes"});
  return std::make_unique<moss::MossNetwork>(settings);
}

}  // namespace refenc::encoders
