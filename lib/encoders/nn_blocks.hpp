// LibTorch building blocks shared by the proxy networks (internal: included by network .cpp files only).
//
// Weights come from a `SeededInit` (one CPU generator seeded from the config hash, drawn in
// construction order), so a network is identical across runs and processes. On CPU in float32 every
// op whose result could depend on the batch size or the padded length is written so that it does not:
// nonlinearities and norms run one scalar function per element/row (never ATen's vector-body/scalar-
// tail split), attention uses fixed-size query blocks against a fixed-length key window, products
// (`linear_rows`) and convolutions call the library with one shape per weight whatever the input
// (fixed tiles and windows, the last zero-padded), so its kernel choice and thread split cannot move
// a frame's bits. Together with causal layers this makes a right-padded batch give each item exactly
// its single-clip result, on any thread count (docs/encoders.md, "Fish batch parity").
//
//   SeededInit init(config_hash);
//   auto conv = std::make_shared<CausalConv1d>(init, 1, 64, 7);
//   torch::Tensor y = conv->forward(x);   // x [B, 1, N] -> y [B, 64, N]
#pragma once

#include <torch/torch.h>

#include "encoders/network_common.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace refenc::encoders::nn {

/// Applies `fn` to every element of a float tensor, one scalar call per element (shape-independent bits).
torch::Tensor map_elements(const torch::Tensor& x, float (*fn)(float));
float gelu_scalar(float x);
float silu_scalar(float x);
float elu_scalar(float x);
float relu_scalar(float x);
float sigmoid_scalar(float x);
float tanh_scalar(float x);

/// Normalises over the last dimension row by row (RMSNorm when `rms`, else LayerNorm), then
/// scales by `weight` and adds `bias` (either may be undefined).
torch::Tensor row_norm(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool rms,
                       double eps = 1e-5);

/// Snake: x + 1/alpha * sin(alpha x)^2, alpha per channel of x [B, C, T].
torch::Tensor snake(const torch::Tensor& x, const torch::Tensor& alpha);

/// Causal 1-D convolution (left padding (k-1)*dilation - (stride-1)); weight normalisation folded
/// at init. The input length must be a multiple of the stride; output length = input / stride. On CPU
/// in float32 an output frame's bits depend only on its clip's inputs up to it, not on the batch or
/// the padded length.
struct CausalConv1dImpl : torch::nn::Module {
  CausalConv1dImpl(SeededInit& init, std::int64_t cin, std::int64_t cout, std::int64_t kernel, std::int64_t stride = 1,
                   std::int64_t dilation = 1, std::int64_t groups = 1, bool bias = true);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  std::int64_t kernel, stride, dilation, groups;
};
TORCH_MODULE(CausalConv1d);

/// Rows per library product call for a [M, K] weight in `linear_rows` (one shape per weight).
std::int64_t tile_rows(std::int64_t k, std::int64_t m);
/// Output frames per library call of a CausalConv1d with K = Cin/groups * kernel and M outputs.
std::int64_t conv_window(std::int64_t k, std::int64_t m);

/// x W^T + b on the last dimension (b may be undefined). On CPU in float32, for x [..., T, K] the bits of
/// frame t depend only on that frame's row and t, not on T, the leading dimensions or the other rows:
/// batching and right padding cannot change them (for a 2-D x, row i's depend on the row and i).
torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

/// y = x W^T + b on the last dimension (`linear_rows`).
struct LinearImpl : torch::nn::Module {
  LinearImpl(SeededInit& init, std::int64_t in, std::int64_t out, bool bias = true);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
};
TORCH_MODULE(Linear);

struct TransformerConfig {
  std::int64_t dim = 64, heads = 4, ffn = 256, layers = 1, window = 128;
  bool rms_norm = false;   ///< RMSNorm (else LayerNorm).
  bool swiglu = false;     ///< SwiGLU FFN (else GELU MLP).
  double layer_scale = 0;  ///< LayerScale init (0 = none).
  bool qkv_bias = false;
};

/// Pre-norm causal transformer over [B, T, D] with RoPE and attention limited to `window` frames.
struct CausalTransformerImpl : torch::nn::Module {
  CausalTransformerImpl(SeededInit& init, const TransformerConfig& cfg);
  torch::Tensor forward(const torch::Tensor& x);
  TransformerConfig cfg;
  struct Layer {
    torch::Tensor norm1_w, norm1_b, norm2_w, norm2_b, scale1, scale2;
    Linear qkv{nullptr}, proj{nullptr}, up{nullptr}, gate{nullptr}, down{nullptr};
  };
  std::vector<Layer> layers;
};
TORCH_MODULE(CausalTransformer);

/// Windowed causal attention of q, k, v [B, H, T, dh] with RoPE already applied.
torch::Tensor windowed_causal_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                        std::int64_t window);

/// Residual vector quantizer: per stage an in-projection dim -> cb_dim, nearest neighbour (cosine or
/// Euclidean) in its codebook, out-projection cb_dim -> dim subtracted from the residual.
struct ResidualVQImpl : torch::nn::Module {
  ResidualVQImpl(SeededInit& init, std::int64_t dim, std::vector<std::int64_t> codebook_sizes, std::int64_t cb_dim,
                 bool cosine);
  /// z [B, T, dim] -> codes [B, T, stages] int64 (float32 arithmetic).
  torch::Tensor forward(const torch::Tensor& z, std::int64_t stages);
  bool cosine;
  std::vector<Linear> in_proj, out_proj;
  std::vector<torch::Tensor> codebooks;  ///< [size, cb_dim]
};
TORCH_MODULE(ResidualVQ);

/// Counts the parameters of a module tree.
std::int64_t count_parameters(const torch::nn::Module& m);

}  // namespace refenc::encoders::nn
