// Helpers shared by the network implementations (internal, LibTorch): config identity of a seeded
// proxy and tensor conversion to the LibTorch-free HostTensor.
//
//   ProxyConfig c = proxy_config("fish-s2-pro", settings, dims_json);
//   SeededInit init(c.weight_seed);       // same weights for every dtype and device
//   HostTensor h = to_host(codes);        // int64 or float32, contiguous CPU copy
#pragma once

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "encoders/checkpoint.hpp"
#include "encoders/network.hpp"

namespace refenc::encoders {

namespace nn {

/// Deterministic weight source: normal/uniform draws from one CPU generator seeded from a hex digest.
class SeededInit {
 public:
  explicit SeededInit(const std::string& seed_hex);
  /// N(0, gain / sqrt(fan_in)) weights of `shape`.
  at::Tensor weight(at::IntArrayRef shape, std::int64_t fan_in, double gain = 1.0);
  at::Tensor normal(at::IntArrayRef shape, double mean, double std);
  at::Tensor uniform(at::IntArrayRef shape, double lo, double hi);

 private:
  at::Generator gen_;
};

/// Whether `s` ends with `tail`.
inline bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// How a seeded tensor is drawn (`seed_tree`).
enum class SeededKind {
  weight,       ///< N(0, 1/fan_in), fan_in = the product of the dimensions after the first
  normal,       ///< N(0, 1) (codebooks)
  zeros,        ///< biases
  ones,         ///< norms, usages, Snake alphas
  layer_scale,  ///< 1e-2, the upstream LayerScale init
};

/// Draws every tensor of `tree` into `w`, in tree order from `init`, as `kind_of(name)` says; weight-norm gains
/// (`...original0`, `...weight_g`) are not drawn but set to the norm of their direction (`...original1`,
/// `...weight_v`), so that the folded weight is the direction itself.
void seed_tree(const std::vector<TensorSpec>& tree, SeededInit& init,
               const std::function<SeededKind(const std::string& name)>& kind_of, WeightMap& w);

/// Parses "float32"/"bfloat16" and "cpu"/"cuda:N" (Error(config) otherwise, or for CUDA without a device).
at::ScalarType scalar_type_of(const std::string& dtype);
at::Device device_of(const std::string& device);

/// Right-pads clips to a common length (a multiple of `multiple`) into [B, 1, N] float32 on `device`.
at::Tensor pad_batch(const std::vector<std::span<const float>>& clips, std::int64_t multiple, const at::Device& device);

}  // namespace nn

/// Revision string of every seeded proxy network.
inline constexpr const char* kProxyRevision = "proxy-v1";

struct ProxyConfig {
  EncoderConfig config;
  std::string weight_seed;  ///< SHA-256 hex of the dtype/device-free part of the config.
};

/// Canonical config of a proxy: family, revision, scale, dtype, device type and `dims`.
ProxyConfig proxy_config(const std::string& family, const NetworkSettings& settings, const nlohmann::json& dims);

/// Canonical config of a network loaded from `file`: family, revision "checkpoint", scale, `dims`, the
/// file's SHA-256, dtype and device type; model_revision "checkpoint:<sha256>".
EncoderConfig checkpoint_config(const std::string& family, const NetworkSettings& settings, const nlohmann::json& dims,
                                const CheckpointFile& file);

/// The same for a checkpoint of several files (a model folder, `path`): "checkpoint_files" maps each file's
/// path relative to `path` to its SHA-256, and the revision's digest is the SHA-256 of those lines.
EncoderConfig checkpoint_config(const std::string& family, const NetworkSettings& settings, const nlohmann::json& dims,
                                std::span<const CheckpointFile* const> files, const std::string& path);

/// Contiguous CPU copy of an int64 (any integer) or floating tensor.
HostTensor to_host(const at::Tensor& t);

/// The batched path shared by the codec networks: right-pads every item to a multiple of `hop` into
/// one [B, 1, N] buffer (on `device`, in `dtype`), runs `forward` once, and keeps each item's
/// ceil(samples / hop) frames along `time_dim` of its row, as tensor "codes".
std::vector<NetworkOutput> encode_padded_codes(std::span<const NetworkItem> items, std::int64_t hop,
                                               const at::Device& device, at::ScalarType dtype,
                                               std::int64_t time_dim,
                                               const std::function<at::Tensor(const at::Tensor&)>& forward);

}  // namespace refenc::encoders
