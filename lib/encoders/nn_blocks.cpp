#include "encoders/nn_blocks.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.hpp"

namespace refenc::encoders::nn {

namespace {

/// Runs `fn(begin, end)` over [0, n) in parallel chunks; each index is handled by exactly one call.
template <class F>
void parallel_rows(std::int64_t n, std::int64_t grain, F fn) {
  at::parallel_for(0, n, grain, fn);
}

}  // namespace

float gelu_scalar(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
float silu_scalar(float x) { return x / (1.0f + std::exp(-x)); }
float elu_scalar(float x) { return x > 0 ? x : std::expm1(x); }
float relu_scalar(float x) { return x > 0 ? x : 0.0f; }
float sigmoid_scalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float tanh_scalar(float x) { return std::tanh(x); }

torch::Tensor map_elements(const torch::Tensor& x, float (*fn)(float)) {
  if (!x.device().is_cpu()) {
    if (fn == &gelu_scalar) return at::gelu(x);
    if (fn == &silu_scalar) return at::silu(x);
    if (fn == &elu_scalar) return at::elu(x);
    if (fn == &relu_scalar) return at::relu(x);
    if (fn == &sigmoid_scalar) return at::sigmoid(x);
    return at::tanh(x);
  }
  torch::Tensor in = x.to(torch::kFloat32).contiguous();
  torch::Tensor out = torch::empty_like(in);
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  parallel_rows(in.numel(), 1 << 14, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) dst[i] = fn(src[i]);
  });
  return out.to(x.scalar_type());
}

torch::Tensor row_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool rms,
                       double eps) {
  if (!x.device().is_cpu()) {
    torch::Tensor y;
    if (rms) {
      y = x * at::rsqrt(x.pow(2).mean(-1, true) + eps);
    } else {
      y = at::layer_norm(x, {x.size(-1)}, {}, {}, eps);
    }
    if (weight.defined()) y = y * weight;
    if (bias.defined()) y = y + bias;
    return y;
  }
  torch::Tensor in = x.to(torch::kFloat32).contiguous();
  torch::Tensor out = torch::empty_like(in);
  const std::int64_t d = in.size(-1);
  const std::int64_t rows = d == 0 ? 0 : in.numel() / d;
  torch::Tensor w = weight.defined() ? weight.to(torch::kFloat32).contiguous() : torch::Tensor();
  torch::Tensor bb = bias.defined() ? bias.to(torch::kFloat32).contiguous() : torch::Tensor();
  const float* wp = w.defined() ? w.data_ptr<float>() : nullptr;
  const float* bp = bb.defined() ? bb.data_ptr<float>() : nullptr;
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  parallel_rows(rows, 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float* row = src + r * d;
      float* o = dst + r * d;
      double mean = 0;
      if (!rms) {
        for (std::int64_t i = 0; i < d; ++i) mean += row[i];
        mean /= static_cast<double>(d);
      }
      double var = 0;
      for (std::int64_t i = 0; i < d; ++i) {
        double c = row[i] - mean;
        var += c * c;
      }
      var /= static_cast<double>(d);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (std::int64_t i = 0; i < d; ++i) {
        float v = static_cast<float>((row[i] - mean) * inv);
        if (wp) v *= wp[i];
        if (bp) v += bp[i];
        o[i] = v;
      }
    }
  });
  return out.to(x.scalar_type());
}

namespace {

/// sin(y)^2 from +, -, * only (Cody-Waite reduction by pi, odd Taylor polynomial to r^11, |error| <
/// 1e-7 on the reduced range), so a vectorised and a scalar evaluation give the same bits.
inline float sin_squared(float y) {
  constexpr float kInvPi = 0.318309886183790671f, kPiHi = 3.14159274101257324f, kPiLo = -8.74227766e-08f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting rounds to an integer
  const float n = (y * kInvPi + kRound) - kRound;
  const float r = (y - n * kPiHi) - n * kPiLo;
  const float r2 = r * r;
  const float p = -1.0f / 6 + r2 * (1.0f / 120 + r2 * (-1.0f / 5040 + r2 * (1.0f / 362880 + r2 * (-1.0f / 39916800))));
  const float s = r + r * r2 * p;
  return s * s;
}

}  // namespace

torch::Tensor snake(const torch::Tensor& x, const torch::Tensor& alpha) {
  if (!x.device().is_cpu()) {
    torch::Tensor a = alpha.view({1, -1, 1});
    torch::Tensor s = at::sin(a * x);
    return x + s * s / (a + 1e-9);
  }
  torch::Tensor in = x.to(torch::kFloat32).contiguous();
  torch::Tensor al = alpha.to(torch::kFloat32).contiguous();
  torch::Tensor out = torch::empty_like(in);
  const std::int64_t channels = in.size(1), t = in.size(2);
  const float* src = in.data_ptr<float>();
  const float* ap = al.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  parallel_rows(in.size(0) * channels, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float a = ap[r % channels];
      const float inv = 1.0f / (a + 1e-9f);
      const float* row = src + r * t;
      float* o = dst + r * t;
      // Fixed-width blocks let the compiler vectorise; every lane computes the same IEEE operations
      // as the scalar remainder (the library builds with -ffp-contract=off), so the bits do not depend on it.
      std::int64_t i = 0;
      for (; i + 8 <= t; i += 8)
        for (int j = 0; j < 8; ++j) o[i + j] = row[i + j] + inv * sin_squared(a * row[i + j]);
      for (; i < t; ++i) o[i] = row[i] + inv * sin_squared(a * row[i]);
    }
  });
  return out.to(x.scalar_type());
}

CausalConv1dImpl::CausalConv1dImpl(SeededInit& init, std::int64_t cin, std::int64_t cout, std::int64_t k,
                                   std::int64_t s, std::int64_t d, std::int64_t g, bool with_bias)
    : kernel(k), stride(s), dilation(d), groups(g) {
  // Weight normalisation w = g * v / |v| with g initialised to |v|: folded, it is v itself.
  weight = register_parameter("weight", init.weight({cout, cin / g, k}, cin / g * k));
  if (with_bias) bias = register_parameter("bias", torch::zeros({cout}));
}

namespace {

/// OpenBLAS computes a product's rows (the rows of x in x W^T) in groups of 12, the last `rows mod 12`
/// with other kernels (8/4/2/1 wide) that round differently, and a row's bits also depend on its place
/// in its group; on several threads it splits the rows (and W's rows) by the product's shape. So every
/// call here has one shape per weight, tile_rows(K, M) rows (the last tile zero-padded), and every
/// sequence starts a tile: however OpenBLAS splits a call, it splits every call alike, and a frame
/// meets the same kernels at the same place whatever the batch or the padded length. Tiles are a
/// multiple of kRowQuantum rows, whole groups for the wide kernels.
constexpr std::int64_t kRowQuantum = 48;
/// A product's tile costs about this many multiply-adds, a convolution's window 4 times as many (its
/// inputs are long): padding the last one wastes little (a fraction of a millisecond; short clips
/// pay it on every layer), and a long input takes few calls.
constexpr std::int64_t kTileMacs = std::int64_t{1} << 20;

bool row_invariant_path(const torch::Tensor& x) { return x.device().is_cpu() && x.scalar_type() == torch::kFloat32; }

/// tile [n, K] W^T + bias for n <= rows: computed as a zero-padded [rows, K] row-major tile (a
/// transposed view would reach another packing routine), the first n rows returned.
torch::Tensor tile_product(const torch::Tensor& tile, const torch::Tensor& wt, const torch::Tensor& bias,
                           std::int64_t rows) {
  const std::int64_t n = tile.size(0);
  torch::Tensor in = n < rows ? at::constant_pad_nd(tile, {0, 0, 0, rows - n}) : tile.contiguous();
  torch::Tensor y = bias.defined() ? at::addmm(bias, in, wt) : at::mm(in, wt);
  return n < rows ? y.narrow(0, 0, n) : y;
}

}  // namespace

std::int64_t tile_rows(std::int64_t k, std::int64_t m) {
  return std::max(kRowQuantum, kTileMacs / (k * m) / kRowQuantum * kRowQuantum);
}

std::int64_t conv_window(std::int64_t k, std::int64_t m) {
  return std::max<std::int64_t>(256, 4 * kTileMacs / (k * m) / kRowQuantum * kRowQuantum);
}

torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!row_invariant_path(x) || weight.scalar_type() != torch::kFloat32) return at::linear(x, weight, bias);
  // Each sequence of x [..., T, K] starts a tile (T zero-padded to a whole number of tiles), so frame
  // t sits at place t mod step of a tile, as it does when the clip runs alone.
  const std::int64_t k = weight.size(1), m = weight.size(0), t = x.dim() >= 3 ? x.size(-2) : 0;
  const std::int64_t step = tile_rows(k, m), extra = t ? (step - t % step) % step : 0;
  const torch::Tensor in = extra ? at::constant_pad_nd(x, {0, 0, 0, extra}) : x;
  const torch::Tensor rows = in.reshape({-1, k}), wt = weight.t();
  const std::int64_t n = rows.size(0);
  std::vector<std::int64_t> shape(in.sizes().begin(), in.sizes().end());
  shape.back() = m;
  torch::Tensor out;
  if (n <= step) {
    out = tile_product(rows, wt, bias, step).view(shape);
  } else {
    out = torch::empty({n, m}, x.options());
    for (std::int64_t r = 0; r < n; r += step) {
      const std::int64_t len = std::min(step, n - r);
      out.narrow(0, r, len).copy_(tile_product(rows.narrow(0, r, len), wt, bias, step));
    }
    out = out.view(shape);
  }
  return extra ? out.narrow(-2, 0, t) : out;
}

torch::Tensor CausalConv1dImpl::forward(const torch::Tensor& x) {
  const std::int64_t pad = (kernel - 1) * dilation - (stride - 1), no_pad = 0;
  torch::Tensor padded = pad > 0 ? at::constant_pad_nd(x, {pad, 0}) : x;
  auto conv = [&](const torch::Tensor& in) {
    return at::conv1d(in, weight, bias, at::IntArrayRef(stride), at::IntArrayRef(no_pad), at::IntArrayRef(dilation),
                      groups);
  };
  if (!row_invariant_path(padded)) return conv(padded);  // other devices and dtypes promise no exact bits
  // The library picks its algorithm, blocking and thread split by the input's shape, so a frame's bits
  // would depend on the batch and the padded length. Each clip runs alone, in windows of a fixed number
  // of output frames starting at its frame 0 (the last window zero-padded): every call has the same
  // shape, and frame t sits at the same place in the same window whatever else is in the batch.
  const std::int64_t b = padded.size(0), cout = weight.size(0), span = (kernel - 1) * dilation + 1;
  const std::int64_t frames = (padded.size(2) - span) / stride + 1;
  const std::int64_t window = conv_window(weight.size(1) * kernel, cout);
  const std::int64_t window_in = (window - 1) * stride + span;
  torch::Tensor out = torch::empty({b, cout, frames}, padded.options());
  for (std::int64_t i = 0; i < b; ++i) {
    for (std::int64_t t = 0; t < frames; t += window) {
      const std::int64_t len = std::min(window, frames - t), start = t * stride;
      torch::Tensor in = padded.narrow(0, i, 1).narrow(2, start, std::min(window_in, padded.size(2) - start));
      if (in.size(2) < window_in) in = at::constant_pad_nd(in, {0, window_in - in.size(2)});
      out[i].narrow(1, t, len).copy_(conv(in)[0].narrow(1, 0, len));
    }
  }
  return out;
}

LinearImpl::LinearImpl(SeededInit& init, std::int64_t in, std::int64_t out, bool with_bias) {
  weight = register_parameter("weight", init.weight({out, in}, in));
  if (with_bias) bias = register_parameter("bias", torch::zeros({out}));
}

torch::Tensor LinearImpl::forward(const torch::Tensor& x) { return linear_rows(x, weight, bias); }

namespace {

/// cos/sin tables [T, dh/2] for RoPE, computed with scalar double math (length-independent values).
std::pair<torch::Tensor, torch::Tensor> rope_tables(std::int64_t t, std::int64_t dh, const torch::Device& device,
                                                    torch::ScalarType type) {
  const std::int64_t half = dh / 2;
  torch::Tensor c = torch::empty({t, half}, torch::kFloat32), s = torch::empty({t, half}, torch::kFloat32);
  float* cp = c.data_ptr<float>();
  float* sp = s.data_ptr<float>();
  for (std::int64_t p = 0; p < t; ++p)
    for (std::int64_t i = 0; i < half; ++i) {
      double freq = std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(dh));
      cp[p * half + i] = static_cast<float>(std::cos(static_cast<double>(p) * freq));
      sp[p * half + i] = static_cast<float>(std::sin(static_cast<double>(p) * freq));
    }
  return {c.to(device, type), s.to(device, type)};
}

/// x [B, H, T, dh]: rotates the two halves of the head dimension.
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const std::int64_t half = x.size(-1) / 2;
  torch::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  return at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

constexpr std::int64_t kQueryBlock = 32;

/// Row softmax with -inf entries, scalar per row so a row's result depends on that row only.
torch::Tensor masked_softmax_rows(const torch::Tensor& scores, const torch::Tensor& mask) {
  if (!scores.device().is_cpu()) return at::softmax(scores.masked_fill(mask.logical_not(), -INFINITY), -1);
  torch::Tensor in = scores.to(torch::kFloat32).contiguous();
  torch::Tensor m = mask.to(torch::kBool).contiguous();  // [nblk, Q, L], broadcast over [B, H]
  torch::Tensor out = torch::empty_like(in);
  const std::int64_t l = in.size(-1);
  const std::int64_t rows = in.numel() / l;
  const std::int64_t mask_rows = m.numel() / l;
  const float* src = in.data_ptr<float>();
  const bool* mp = m.data_ptr<bool>();
  float* dst = out.data_ptr<float>();
  parallel_rows(rows, 8, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const float* row = src + r * l;
      const bool* ok = mp + (r % mask_rows) * l;
      float* o = dst + r * l;
      float mx = -std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < l; ++i)
        if (ok[i] && row[i] > mx) mx = row[i];
      double sum = 0;
      for (std::int64_t i = 0; i < l; ++i) {
        float v = ok[i] ? std::exp(row[i] - mx) : 0.0f;
        o[i] = v;
        sum += v;
      }
      const float inv = sum > 0 ? static_cast<float>(1.0 / sum) : 0.0f;
      for (std::int64_t i = 0; i < l; ++i) o[i] *= inv;
    }
  });
  return out.to(scores.scalar_type());
}

}  // namespace

torch::Tensor windowed_causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                        std::int64_t window) {
  const std::int64_t b = q.size(0), h = q.size(1), t = q.size(2), dh = q.size(3);
  const std::int64_t w = std::max<std::int64_t>(window, 1);
  const std::int64_t nblk = (t + kQueryBlock - 1) / kQueryBlock;
  const std::int64_t tq = nblk * kQueryBlock;
  const std::int64_t l = kQueryBlock + w - 1;
  // Keys/values: W-1 zeros on the left, padding on the right up to the last block's end.
  torch::Tensor kp = at::constant_pad_nd(k, {0, 0, w - 1, tq - t});
  torch::Tensor vp = at::constant_pad_nd(v, {0, 0, w - 1, tq - t});
  torch::Tensor qp = at::constant_pad_nd(q, {0, 0, 0, tq - t}).reshape({b, h, nblk, kQueryBlock, dh});
  torch::Tensor kwin = kp.unfold(2, l, kQueryBlock);                    // [B, H, nblk, dh, L]
  torch::Tensor vwin = vp.unfold(2, l, kQueryBlock).transpose(-1, -2);  // [B, H, nblk, L, dh]
  torch::Tensor scores = at::matmul(qp, kwin.contiguous()) * (1.0 / std::sqrt(static_cast<double>(dh)));
  // Key j of block n is frame n*Q - W + 1 + j; query i is frame n*Q + i.
  torch::Tensor blk = torch::arange(nblk, torch::kInt64).view({nblk, 1, 1});
  torch::Tensor qi = torch::arange(kQueryBlock, torch::kInt64).view({1, kQueryBlock, 1});
  torch::Tensor kj = torch::arange(l, torch::kInt64).view({1, 1, l});
  torch::Tensor key = blk * kQueryBlock - w + 1 + kj;
  torch::Tensor query = blk * kQueryBlock + qi;
  torch::Tensor mask = (key >= 0).logical_and(key <= query).logical_and(key > query - w).to(q.device());
  torch::Tensor attn = masked_softmax_rows(scores, mask);
  torch::Tensor out = at::matmul(attn, vwin.contiguous());  // [B, H, nblk, Q, dh]
  return out.reshape({b, h, tq, dh}).narrow(2, 0, t);
}

CausalTransformerImpl::CausalTransformerImpl(SeededInit& init, const TransformerConfig& c) : cfg(c) {
  for (std::int64_t i = 0; i < cfg.layers; ++i) {
    Layer layer;
    const std::string p = "layer" + std::to_string(i) + "_";
    layer.norm1_w = register_parameter(p + "norm1_weight", torch::ones({cfg.dim}));
    layer.norm2_w = register_parameter(p + "norm2_weight", torch::ones({cfg.dim}));
    if (!cfg.rms_norm) {
      layer.norm1_b = register_parameter(p + "norm1_bias", torch::zeros({cfg.dim}));
      layer.norm2_b = register_parameter(p + "norm2_bias", torch::zeros({cfg.dim}));
    }
    layer.qkv = register_module(p + "qkv", Linear(init, cfg.dim, 3 * cfg.dim, cfg.qkv_bias));
    layer.proj = register_module(p + "proj", Linear(init, cfg.dim, cfg.dim, false));
    layer.up = register_module(p + "up", Linear(init, cfg.dim, cfg.ffn, !cfg.swiglu));
    if (cfg.swiglu) layer.gate = register_module(p + "gate", Linear(init, cfg.dim, cfg.ffn, false));
    layer.down = register_module(p + "down", Linear(init, cfg.ffn, cfg.dim, !cfg.swiglu));
    if (cfg.layer_scale > 0) {
      layer.scale1 = register_parameter(p + "scale1", torch::full({cfg.dim}, cfg.layer_scale));
      layer.scale2 = register_parameter(p + "scale2", torch::full({cfg.dim}, cfg.layer_scale));
    }
    layers.push_back(std::move(layer));
  }
}

torch::Tensor CausalTransformerImpl::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  const std::int64_t b = x.size(0), t = x.size(1), h = cfg.heads, dh = cfg.dim / cfg.heads;
  auto [cos, sin] = rope_tables(t, dh, x.device(), x.scalar_type());
  for (Layer& layer : layers) {
    torch::Tensor y = row_norm(x, layer.norm1_w, layer.norm1_b, cfg.rms_norm);
    torch::Tensor qkv = layer.qkv->forward(y).view({b, t, 3, h, dh}).permute({2, 0, 3, 1, 4});
    torch::Tensor q = apply_rope(qkv[0], cos, sin), k = apply_rope(qkv[1], cos, sin);
    torch::Tensor a = windowed_causal_attention(q, k, qkv[2], cfg.window);
    a = layer.proj->forward(a.transpose(1, 2).reshape({b, t, cfg.dim}));
    if (layer.scale1.defined()) a = a * layer.scale1;
    x = x + a;
    y = row_norm(x, layer.norm2_w, layer.norm2_b, cfg.rms_norm);
    torch::Tensor f;
    if (cfg.swiglu) {
      f = map_elements(layer.gate->forward(y), &silu_scalar) * layer.up->forward(y);
    } else {
      f = map_elements(layer.up->forward(y), &gelu_scalar);
    }
    f = layer.down->forward(f);
    if (layer.scale2.defined()) f = f * layer.scale2;
    x = x + f;
  }
  return x;
}

ResidualVQImpl::ResidualVQImpl(SeededInit& init, std::int64_t dim, std::vector<std::int64_t> sizes, std::int64_t cb_dim,
                               bool cos)
    : cosine(cos) {
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::string p = "stage" + std::to_string(i) + "_";
    in_proj.push_back(register_module(p + "in_proj", Linear(init, dim, cb_dim, true)));
    out_proj.push_back(register_module(p + "out_proj", Linear(init, cb_dim, dim, true)));
    codebooks.push_back(register_parameter(p + "codebook", init.normal({sizes[i], cb_dim}, 0.0, 1.0)));
  }
}

torch::Tensor ResidualVQImpl::forward(const torch::Tensor& z, std::int64_t stages) {
  torch::Tensor residual = z.to(torch::kFloat32);
  std::vector<torch::Tensor> codes;
  for (std::int64_t s = 0; s < stages; ++s) {
    torch::Tensor e = in_proj[s]->forward(residual);  // [B, T, cb_dim]
    const torch::Tensor& cb = codebooks[s];
    torch::Tensor idx;
    if (cosine) {
      // Dividing by |e| does not change the argmax; only the codebook rows are normalised.
      torch::Tensor cn = cb * at::rsqrt((cb * cb).sum(-1, true) + 1e-12);
      idx = linear_rows(e, cn, {}).argmax(-1);
    } else {
      torch::Tensor dist = (cb * cb).sum(-1) - 2 * linear_rows(e, cb, {});
      idx = dist.argmin(-1);
    }
    codes.push_back(idx);
    if (s + 1 < stages) residual = residual - out_proj[s]->forward(at::embedding(cb, idx));
  }
  return at::stack(codes, -1);
}

std::int64_t count_parameters(const torch::nn::Module& m) {
  std::int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace refenc::encoders::nn
